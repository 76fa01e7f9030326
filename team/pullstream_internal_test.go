package team

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spoolBodies are full GET bodies, well-formed or not, for the tests and
// the fuzz seeds.
var spoolBodies = []string{
	`{"organizationId":"o","repo":"acme/widgets","version":3,"lastModified":"2026-03-04T05:06:07Z","checksum":"sha256:ab","content":{"entryChecksums":{"a.md":"sha256:1"},"entries":{"a.md":"A \"q\" \\ \u00e9 \ud83d\ude00 \n"}}}`,
	`{"content":{"entries":{"b.md":"B","MEMORY.md":"- [B](b.md)\n"}},"checksum":"sha256:cd","version":1}`,
	`{"Content":{"Entries":{"x":"1"},"EntryChecksums":null},"VERSION":2}`,
	`{"content":{"entries":null}}`,
	`{"extra":{"deep":[1,{"a":[]}]},"content":{"entries":{"lone":"\ud800x\udc00"},"more":[1,2]}}`,
	`{"content":{"entries":{"a":"1","a":"2"}}}`,
	`{"content":{"entries":{"a":1}}}`,
	`{"content":{"entries":{"a":"1"}}} {}`,
	`{"content":{"entries":{"a":"1"}`,
	`null`,
	``,
	`{"content":{"entries":{"sp" :  "aced" , "n":null}}}`,
}

// decodeSpooled runs the pull's reading of body through a spool file and
// returns the data with the entries read back from it.
func decodeSpooled(t *testing.T, body string) (*Data, map[string]string, error) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), spoolName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(body); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	d, src, err := readSpool(f)
	if err != nil {
		return nil, nil, err
	}
	entries := map[string]string{}
	for i, k := range src.keys {
		if k == IndexKey && i != len(src.keys)-1 {
			t.Fatalf("keys %q: the index is not last", src.keys)
		}
		if !src.has(k) {
			t.Fatalf("has(%q) = false for one of the keys", k)
		}
		v, err := src.content(k)
		if err != nil {
			t.Fatalf("content(%q): %v", k, err)
		}
		entries[k] = v
	}
	return d, entries, nil
}

// checkLikeUnmarshal fails t unless the spooled reading of body agrees
// with json.Unmarshal: whatever it accepts, Unmarshal accepts with the same
// metadata, entries and checksums.
func checkLikeUnmarshal(t *testing.T, body string) error {
	t.Helper()
	d, entries, err := decodeSpooled(t, body)
	if err != nil {
		return err
	}
	var want Data
	if uerr := json.Unmarshal([]byte(body), &want); uerr != nil {
		t.Fatalf("the pull accepted %q, json.Unmarshal refuses it: %v", body, uerr)
	}
	if want.Content.Entries == nil {
		want.Content.Entries = map[string]string{}
	}
	if !maps.Equal(want.Content.Entries, entries) {
		t.Fatalf("%q: entries %q, json.Unmarshal gives %q", body, entries, want.Content.Entries)
	}
	if want.Content.EntryChecksums == nil {
		want.Content.EntryChecksums = map[string]string{}
		for k, v := range want.Content.Entries {
			want.Content.EntryChecksums[k] = EntryChecksum(v)
		}
	}
	if !maps.Equal(want.Content.EntryChecksums, d.Content.EntryChecksums) {
		t.Fatalf("%q: checksums %q, want %q", body, d.Content.EntryChecksums, want.Content.EntryChecksums)
	}
	want.Content = Content{}
	d.Content = Content{}
	if !d.LastModified.Equal(want.LastModified) || d.OrganizationID != want.OrganizationID || d.Repo != want.Repo || d.Version != want.Version || d.Checksum != want.Checksum {
		t.Fatalf("%q: metadata %+v, json.Unmarshal gives %+v", body, d, want)
	}
	return nil
}

func TestReadSpool(t *testing.T) {
	for _, body := range spoolBodies {
		err := checkLikeUnmarshal(t, body)
		wantErr := strings.Contains(body, `"a":"1","a":"2"`) || strings.Contains(body, `"a":1`) ||
			strings.HasSuffix(body, "{}") || strings.HasSuffix(body, `"1"}`) || body == ""
		if (err != nil) != wantErr {
			t.Errorf("%q: error %v, want an error: %v", body, err, wantErr)
		}
	}
}

// FuzzReadSpool checks the pull's reading of a full GET body against
// json.Unmarshal, and that it never panics.
func FuzzReadSpool(f *testing.F) {
	for _, b := range spoolBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkLikeUnmarshal(t, body)
	})
}

// FuzzUnquote checks the fast string decoding against json.Unmarshal, on
// what Marshal writes and on arbitrary literals.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote \ back`, "\u00e9\U0001F600\n\t\x01", `\ud800`, "\xff\xfe", `"\ud83d\ude00"`, `"\ud800\u0041"`, `"\/\b\f"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, lit := range [][]byte{mustMarshal(s), []byte(`"` + s + `"`), []byte(s)} {
			var want string
			uerr := json.Unmarshal(lit, &want)
			got, ok := unquote(lit)
			if ok && (uerr != nil || got != want) {
				t.Fatalf("unquote(%q) = %q; json.Unmarshal gives %q, %v", lit, got, want, uerr)
			}
		}
		if got, ok := unquote(mustMarshal(s)); !ok && strings.ToValidUTF8(s, "\uFFFD") == s {
			t.Fatalf("unquote refused what json.Marshal wrote for %q (got %q)", s, got)
		}
	})
}

func mustMarshal(s string) []byte {
	b, _ := marshalJSON(s)
	return b
}
