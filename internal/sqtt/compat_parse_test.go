package sqtt

import "testing"

// TestParseCompat: the one parser of the compat mode reads both spellings
// of --compat, gives them back from String and refuses anything else.
func TestParseCompat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Compat
	}{{"newest", Newest}, {"0.1.6", Lib016}} {
		got, err := ParseCompat(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCompat(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), c.in)
		}
		var u Compat
		if err := u.UnmarshalText([]byte(c.in)); err != nil || u != c.want {
			t.Errorf("UnmarshalText(%q) = %v, %v", c.in, u, err)
		}
	}
	for _, bad := range []string{"", "0.1.5", "Newest", "016", "old"} {
		if _, err := ParseCompat(bad); err == nil {
			t.Errorf("ParseCompat(%q) accepted", bad)
		}
	}
	if Compat(7).String() != "Compat(7)" {
		t.Errorf("out of range String = %q", Compat(7).String())
	}
}
