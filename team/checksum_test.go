package team

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

func TestEntryChecksum(t *testing.T) {
	// sha256("") and sha256("hello\n"), as `printf 'hello\n' | sha256sum` prints them.
	tests := map[string]string{
		"":        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"hello\n": "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
	}
	for in, want := range tests {
		if got := EntryChecksum(in); got != want {
			t.Errorf("EntryChecksum(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRepoChecksum(t *testing.T) {
	a := map[string]string{"a": EntryChecksum("1"), "b": EntryChecksum("2")}
	same := map[string]string{"b": EntryChecksum("2"), "a": EntryChecksum("1")}
	if RepoChecksum(a) != RepoChecksum(same) {
		t.Errorf("RepoChecksum depends on map order")
	}
	for name, other := range map[string]map[string]string{
		"content":  {"a": EntryChecksum("1"), "b": EntryChecksum("3")},
		"key":      {"a": EntryChecksum("1"), "c": EntryChecksum("2")},
		"fewer":    {"a": EntryChecksum("1")},
		"boundary": {"a" + "\x00" + EntryChecksum("1"): "", "b": EntryChecksum("2")},
	} {
		if RepoChecksum(other) == RepoChecksum(a) {
			t.Errorf("RepoChecksum ignores a change of %s", name)
		}
	}
}

func TestParseETag(t *testing.T) {
	for in, want := range map[string]string{`"sha256:ab"`: "sha256:ab", `W/"x"`: "x", "bare": "bare", ` "sp" `: "sp", `"`: `"`} {
		if got := parseETag(in); got != want {
			t.Errorf("parseETag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlanUpdate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.FixedZone("x", 3600))
	cur := map[string]string{"a.md": EntryChecksum("A"), "b.md": EntryChecksum("B")}
	tests := []struct {
		name    string
		current map[string]string
		u       Update
		want    *Plan
		wantErr error
	}{
		{
			name:    "upsert and delete",
			current: cur,
			u:       Update{Entries: map[string]string{"a.md": "A", "c.md": "C", "b.md": "B2"}, Deletes: []string{"zz.md"}, Now: now},
			want: &Plan{
				Checksums: map[string]string{"a.md": EntryChecksum("A"), "b.md": EntryChecksum("B2"), "c.md": EntryChecksum("C")},
				Changed:   []string{"b.md", "c.md"},
				Time:      now.UTC().Truncate(time.Millisecond),
			},
		},
		{
			name:    "delete",
			current: cur,
			u:       Update{Deletes: []string{"b.md"}, Now: now},
			want:    &Plan{Checksums: map[string]string{"a.md": EntryChecksum("A")}, Deleted: []string{"b.md"}, Time: now.UTC().Truncate(time.Millisecond)},
		},
		{
			name:    "over the limit",
			current: cur,
			u:       Update{Entries: map[string]string{"c.md": "C"}, MaxEntries: 2},
			wantErr: &TooManyEntriesError{Max: 2, Received: 3},
		},
		{
			name:    "already over a lowered limit, not growing",
			current: cur,
			u:       Update{Entries: map[string]string{"a.md": "A2"}, MaxEntries: 1, Now: now},
			want:    &Plan{Checksums: map[string]string{"a.md": EntryChecksum("A2"), "b.md": EntryChecksum("B")}, Changed: []string{"a.md"}, Time: now.UTC().Truncate(time.Millisecond)},
		},
		{name: "bad key", current: cur, u: Update{Entries: map[string]string{"../x": "x"}}, wantErr: ErrInvalidKey},
		{name: "bad delete key", current: cur, u: Update{Deletes: []string{"a\\b"}}, wantErr: ErrInvalidKey},
		{name: "write and delete", current: cur, u: Update{Entries: map[string]string{"a.md": "x"}, Deletes: []string{"a.md"}}, wantErr: ErrInvalidKey},
		{name: "NUL content", current: cur, u: Update{Entries: map[string]string{"a.md": "\x00"}}, wantErr: memdir.ErrInvalid},
		{name: "invalid UTF-8", current: cur, u: Update{Entries: map[string]string{"a.md": "\xff"}}, wantErr: memdir.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlanUpdate(tt.current, &tt.u)
			if tt.wantErr != nil {
				var tm *TooManyEntriesError
				if want, ok := tt.wantErr.(*TooManyEntriesError); ok {
					if !errors.As(err, &tm) || *tm != *want {
						t.Fatalf("err = %v, want %v", err, want)
					}
					return
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Checksum = RepoChecksum(tt.want.Checksums)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PlanUpdate (-want +got):\n%s", diff)
			}
		})
	}
}
