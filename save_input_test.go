package memdir

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Text that is not valid UTF-8 in any field a save writes is refused with
// an error naming the field, never a panic, and nothing is written.
func TestSaveRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := "caf\xe9"
	for _, tc := range []struct {
		field string
		m     Memory
		opts  *SaveOptions
	}{
		{"name", Memory{Name: bad, Description: "d", Body: "b"}, nil},
		{"description", Memory{Name: "n", Description: bad, Body: "b"}, nil},
		{"body", Memory{Name: "n", Description: "d", Body: "line\n" + bad}, nil},
		{"type", Memory{Name: "n", Description: "d", RawType: bad, Body: "b"}, nil},
		{"provenance", Memory{Name: "n", Description: "d", Body: "b"}, &SaveOptions{Origin: &Provenance{By: ByExtraction, Session: bad}}},
	} {
		d := mustOpen(t)
		m := tc.m
		_, err := d.Save(ctx, &m, tc.opts)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%s: Save = %v; want ErrInvalid naming the %s", tc.field, err, tc.field)
		}
		if d.Exists() {
			if res, _ := d.Scan(ctx, nil); res != nil && res.Total > 0 {
				t.Errorf("%s: a memory was written", tc.field)
			}
		}
	}
}

// FuzzSave: no field of a memory makes Save panic; what it accepts reads
// back as valid UTF-8.
func FuzzSave(f *testing.F) {
	f.Add("name", "description", "body", "project", "", false)
	f.Add("caf\xe9", "d", "b", "", "", true)
	f.Add("n", "d\x00", "b\xff", "user", "x/y.md", false)
	f.Add("n", "line\nbreak", "---\nname: inner\n---\n", "feedback", "../x.md", false)
	f.Fuzz(func(t *testing.T, name, desc, body, typ, path string, team bool) {
		d := mustOpen(t)
		m := &Memory{Name: name, Description: desc, Body: body, RawType: typ, Path: path}
		res, err := d.Save(context.Background(), m, &SaveOptions{Team: team})
		if err != nil {
			return
		}
		got, err := d.Get(context.Background(), res.Path)
		if err != nil {
			t.Fatalf("saved %s but cannot read it back: %v", res.Path, err)
		}
		if !utf8.ValidString(got.Name) || !utf8.ValidString(got.Description) || !utf8.ValidString(got.Body) {
			t.Fatalf("read back invalid UTF-8: %+v", got)
		}
	})
}
