package memdir

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir/internal/mdtext"
)

func TestParseMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		in        string
		want      Memory // Path, ModTime, front ignored
		recovered bool   // a recovered YAML problem is expected
		broken    bool   // an unrecoverable problem is expected
	}{
		{
			name: "canonical",
			in:   "---\nname: testing\ndescription: run the race detector\ntype: feedback\n---\n\nAlways use -race.\n",
			want: Memory{Name: "testing", Description: "run the race detector", Type: TypeFeedback, RawType: "feedback", Body: "Always use -race.\n"},
		},
		{
			name: "BOM and CRLF",
			in:   "\ufeff---\r\nname: a\r\ndescription: b\r\ntype: user\r\n---\r\nbody\r\n",
			want: Memory{Name: "a", Description: "b", Type: TypeUser, RawType: "user", Body: "body\n"},
		},
		{
			name: "metadata.type from newer Claude Code",
			in:   "---\nname: a\ndescription: b\nmetadata:\n  type: project\n---\nx",
			want: Memory{Name: "a", Description: "b", Type: TypeProject, RawType: "project", Body: "x"},
		},
		{
			name: "top-level type wins over metadata",
			in:   "---\nname: a\ndescription: b\ntype: user\nmetadata:\n  type: project\n---\n",
			want: Memory{Name: "a", Description: "b", Type: TypeUser, RawType: "user"},
		},
		{
			name: "unknown type is untyped but kept",
			in:   "---\nname: a\ndescription: b\ntype: Feedback\n---\n",
			want: Memory{Name: "a", Description: "b", RawType: "Feedback"},
		},
		{
			name:      "unquoted colon recovered",
			in:        "---\nname: deploy\ndescription: Deploys: use the blue/green script: always\ntype: project\n---\nbody",
			want:      Memory{Name: "deploy", Description: "Deploys: use the blue/green script: always", Type: TypeProject, RawType: "project", Body: "body"},
			recovered: true,
		},
		{
			name:   "hopeless YAML gives empty frontmatter",
			in:     "---\nname: [unclosed\n  - {\n---\nbody",
			want:   Memory{Body: "body"},
			broken: true,
		},
		{
			name: "no frontmatter",
			in:   "# Just notes\n",
			want: Memory{Body: "# Just notes\n"},
		},
		{
			name: "quoted values and comments",
			in:   "---\nname: \"x: y\"\ndescription: 'it''s # here' # a comment\ntype: reference\n---\n",
			want: Memory{Name: "x: y", Description: "it's # here", Type: TypeReference, RawType: "reference"},
		},
		{
			name: "boolean-looking description stays text",
			in:   "---\nname: a\ndescription: yes\ntype: user\n---\n",
			want: Memory{Name: "a", Description: "yes", Type: TypeUser, RawType: "user"},
		},
		{
			name: "Chinese",
			in:   "---\nname: 部署流程\ndescription: 发布前必须跑集成测试\ntype: feedback\n---\n正文",
			want: Memory{Name: "部署流程", Description: "发布前必须跑集成测试", Type: TypeFeedback, RawType: "feedback", Body: "正文"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, prob := ParseMemory([]byte(tc.in))
			got := *m
			got.front = nil
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Memory{})); diff != "" {
				t.Errorf("ParseMemory (-want +got):\n%s", diff)
			}
			switch {
			case tc.recovered && (prob == nil || !prob.Recovered):
				t.Errorf("problem = %v, want a recovered YAML problem", prob)
			case tc.broken && (prob == nil || prob.Recovered):
				t.Errorf("problem = %v, want an unrecoverable problem", prob)
			case !tc.recovered && !tc.broken && prob != nil:
				t.Errorf("unexpected problem: %v", prob)
			}
		})
	}
}

func TestFormatPreservesUnknownKeysAndRoundTrips(t *testing.T) {
	t.Parallel()
	in := "---\nname: old\ndescription: d\nmodified: 2026-03-05T10:00:00Z\nmetadata:\n  type: user\n  source: chat\ntags: [a, b]\n---\n\nbody line\n"
	m, prob := ParseMemory([]byte(in))
	if prob != nil {
		t.Fatal(prob)
	}
	m.Name = "new: name"
	m.Type = TypeFeedback
	m.Description = "multi\nline   description"
	out := string(m.Format())
	want := "---\nname: 'new: name'\ndescription: multi line description\ntype: feedback\nmodified: 2026-03-05T10:00:00Z\nmetadata:\n  type: feedback\n  source: chat\ntags: [a, b]\n---\n\nbody line\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
	back, prob := ParseMemory([]byte(out))
	if prob != nil {
		t.Fatal(prob)
	}
	if back.Name != "new: name" || back.Type != TypeFeedback || back.Description != "multi line description" || back.Body != "body line\n" {
		t.Errorf("round trip lost data: %+v", back)
	}
	if md := back.Metadata(); md["tags"] == nil || md["modified"] == nil {
		t.Errorf("Metadata lost keys: %v", md)
	}
}

func TestFormatQuotesAmbiguousValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"true", "null", "123", "2026-01-01", "- item", "#tag", "a: b", "'q'", "~", "", " lead"} {
		m := &Memory{Name: "n", Description: v, Type: TypeUser, Body: "b"}
		back, prob := ParseMemory(m.Format())
		if prob != nil || back.Description != mdtext.OneLine(v) {
			t.Errorf("description %q came back as %q (problem %v)", v, back.Description, prob)
		}
	}
}

// FuzzParseMemory checks that parsing never panics, that formatting what was
// parsed always parses back to the same fields, and that the fast frontmatter
// path agrees with the YAML parser whenever it accepts the input.
func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\ntype: user\n---\nbody",
		"---\nname: a: b\n---\n",
		"\ufeff---\r\nname: x\r\n---\r\n",
		"---\nmetadata:\n  type: project\n---\n",
		"---\n---\n",
		"no front matter",
		"---\nname: \"unterminated\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, _ := ParseMemory([]byte(s))
		if body := MemoryBody([]byte(s)); body != m.Body {
			t.Fatalf("MemoryBody %q, ParseMemory's body %q", body, m.Body)
		}
		if m.Name == "" {
			m.Name = "n"
		}
		out := m.Format()
		back, prob := ParseMemory(out)
		if prob != nil {
			t.Fatalf("Format output does not parse: %v\n%s", prob, out)
		}
		if back.Name != mdtext.OneLine(m.Name) || back.Description != mdtext.OneLine(m.Description) || back.RawType != oneLineType(m) {
			t.Fatalf("round trip changed fields: %+v -> %+v\n%s", m, back, out)
		}
		// The frontmatter functions take text as ParseMemory hands it over.
		s = mdtext.Normalize([]byte(s))
		// A header's fields are ParseMemory's, without its nodes.
		hf, hprob := parseHeaderFields(s)
		pm, pprob := ParseMemory([]byte(s))
		if want := (headerFields{pm.Name, pm.Description, pm.RawType, pm.HasFrontmatter()}); hf != want || (hprob == nil) != (pprob == nil) {
			t.Fatalf("parseHeaderFields(%q) = %+v, %v; ParseMemory gives %+v, %v", s, hf, hprob, want, pprob)
		}
		if _, prob := parseFrontmatterYAML(s); prob == nil {
			if fast, ok := parseSimpleFrontmatter(s); ok {
				slow, err := decodeMapping(s)
				if err != nil {
					t.Fatalf("fast path accepted what YAML rejects: %q: %v", s, err)
				}
				if got, want := mappingStrings(fast), mappingStrings(slow); !cmp.Equal(got, want) {
					t.Fatalf("fast path disagrees with YAML on %q:\n%v\n%v", s, got, want)
				}
			}
		}
	})
}

func oneLineType(m *Memory) string {
	if m.Type != "" {
		return string(m.Type)
	}
	return m.RawType
}

func mappingStrings(n *yaml.Node) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = scalarString(n.Content[i+1])
	}
	return out
}

func TestFileNameFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		typ  Type
		want string
	}{
		{"user-role", TypeUser, "user_role.md"},
		{"testing policy", TypeFeedback, "feedback_testing_policy.md"},
		{"Feedback: Testing!", TypeFeedback, "feedback_testing.md"},
		{"部署流程", TypeProject, "project_部署流程.md"},
		{"!!!", "", "memory.md"},
		{"Grafana", TypeReference, "reference_grafana.md"},
	} {
		if got := FileNameFor(tc.name, tc.typ); got != tc.want {
			t.Errorf("FileNameFor(%q, %q) = %q, want %q", tc.name, tc.typ, got, tc.want)
		}
	}
	if !strings.HasSuffix(FileNameFor(strings.Repeat("x", 500), ""), ".md") || len(FileNameFor(strings.Repeat("x", 500), "")) > 90 {
		t.Error("long names are not capped")
	}
}

// Quoted values on one line are read without the YAML parser, exactly as
// the parser reads them.
func TestSimpleFrontmatterQuotedValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		`'Airflow tasks must be idempotent: replace the target'`,
		`'it''s a ''quoted'' word'`,
		`"double: quoted, no escapes"`,
		`''`,
		`"日本語: ok"`,
	} {
		src := "name: x\ndescription: " + v + "\ntype: user\n"
		fast, ok := parseSimpleFrontmatter(src)
		if !ok {
			t.Errorf("%s: not read by the simple parser", v)
			continue
		}
		slow, err := decodeMapping(src)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mapGet(fast, "description").Value, mapGet(slow, "description").Value; got != want {
			t.Errorf("%s: simple parser %q, YAML %q", v, got, want)
		}
	}
	for _, v := range []string{`'unclosed`, `'a' # comment`, `"esc\"aped"`, `'a'b'`} {
		if _, ok := parseSimpleFrontmatter("description: " + v + "\n"); ok {
			t.Errorf("%s: the simple parser took it; it must go to YAML", v)
		}
	}
	// YAML's words for null, booleans and floats, in any case, resolve to
	// other types: YAML reads them. Longer values that merely start like
	// one are plain strings.
	for _, v := range []string{"null", "Null", "NULL", "~", "true", "True", "FALSE", "yes", "Yes", "no", "NO", "on", "On", "off", "OFF", "y", "Y", "n", "N", ".nan", ".NaN", ".inf", ".Inf", "-.inf", "+.INF"} {
		if _, ok := parseSimpleFrontmatter("description: " + v + "\n"); ok {
			t.Errorf("%s: the simple parser took it; it must go to YAML", v)
		}
	}
	for _, v := range []string{"nullable field", "True story of the deploy", "Yesterday's outage", "Offline mode", "none"} {
		src := "description: " + v + "\n"
		fast, ok := parseSimpleFrontmatter(src)
		if !ok {
			t.Errorf("%s: not read by the simple parser", v)
			continue
		}
		if got := mapGet(fast, "description").Value; got != v {
			t.Errorf("%s: read as %q", v, got)
		}
	}
}

// TestParsedTypeKeepsNoText checks that a parsed type is the package's
// constant, not a slice of the file's text: a header keeps its type, and a
// slice would keep the file's first lines alive with it (at 100,000
// memories, 73 MB of a first index build's peak).
func TestParsedTypeKeepsNoText(t *testing.T) {
	for _, typ := range Types {
		m, _ := ParseMemory([]byte("---\nname: n\ndescription: d\ntype: " + string(typ) + "\n---\nbody\n"))
		if m.Type != typ || unsafe.StringData(string(m.Type)) != unsafe.StringData(string(typ)) {
			t.Errorf("type %q parsed as %q, not the constant", typ, m.Type)
		}
	}
}
