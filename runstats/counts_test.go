package runstats

import "testing"

func TestCounts(t *testing.T) {
	tests := []struct {
		name  string
		m     map[string]int64
		order []string
		want  string
	}{
		{"none", nil, []string{"a"}, "-"},
		{"zeros left out", map[string]int64{"a": 0, "b": 0}, nil, "-"},
		{"known order first, then sorted", map[string]int64{"z": 1, "Error": 2, "Accept": 3, "m": 4}, []string{"Accept", "Suggest", "Error"},
			"Accept 3, Error 2, m 4, z 1"},
	}
	for _, tt := range tests {
		if got := Counts(tt.m, tt.order); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
