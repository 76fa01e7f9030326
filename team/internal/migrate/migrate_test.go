package migrate

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []Migration
		wantErr bool
	}{
		{
			name: "sorted by number",
			fs: fstest.MapFS{
				"0010_b.sql": {Data: []byte("B")},
				"0002_a.sql": {Data: []byte("A")},
				"README":     {Data: []byte("ignored")},
			},
			want: []Migration{{2, "0002_a.sql", "A"}, {10, "0010_b.sql", "B"}},
		},
		{name: "duplicate", fs: fstest.MapFS{"1_a.sql": {}, "01_b.sql": {}}, wantErr: true},
		{name: "no number", fs: fstest.MapFS{"init.sql": {}}, wantErr: true},
		{name: "zero", fs: fstest.MapFS{"0_init.sql": {}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.fs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Load: err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}
