package fold

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

func TestPyInt(t *testing.T) {
	good := map[string]int64{
		"0": 0, "000": 0, "12": 12, "-7": -7, "+7": 7, "1_000": 1000, "0x1F": 31,
		"0X_ff": 255, "0o17": 15, "0b101": 5, "-0x10": -16, "9223372036854775807": 1<<63 - 1,
		"-9223372036854775808": -1 << 63,
	}
	for s, want := range good {
		if got, err := pyInt(s); err != nil || got != want {
			t.Errorf("pyInt(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "010", "1__0", "_1", "1_", "0x", "0x__1", "1.5", "abc", "0b2", "9223372036854775808", "- 1", "0xg"} {
		if got, err := pyInt(s); err == nil {
			t.Errorf("pyInt(%q) = %d, want an error", s, got)
		}
	}
	if u, err := pyUint("18446744073709551615"); err != nil || u != 1<<64-1 {
		t.Errorf("pyUint(max) = %d, %v", u, err)
	}
	if _, err := pyUint("-1"); err == nil {
		t.Error("pyUint(-1) accepted")
	}
}

func readControl(t *testing.T, c *Control, name, text string) error {
	t.Helper()
	return c.Read(strings.NewReader(text), name)
}

// TestValidate: control rows add up per PC (across files too); mismatches
// are reported in (code object, address) order with the counters in the
// order Hitcount, Stall, Latency, Idle; a traced PC absent from the
// control and a control PC never hit both fail.
func TestValidate(t *testing.T) {
	f := New(exampleIndex())
	f.AddWave(workedWave())
	// Control matching the worked example exactly, split over two files
	// for 4872, with one row using hex and spaces.
	c1 := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,4864,; _mykernel,0,0,0,0,mykernel\r\n" +
		"1,4864,\"s_load_dwordx2 s[0:1], s[4:5], 0x0\",1,8,0,0,/src/k.cl:3\r\n" +
		"1,4872,\"s_cmp_eq_u32 s2, 0\",1,3,1,1,\r\n" +
		"\r\n" +
		" 1 , 0x130c ,s_cbranch_scc1 4, 1 ,20,,0,\r\n"
	c2 := "Vaddr,CodeObj,Hitcount,Latency,Stall,Idle,Instruction\n" +
		"4872,1,0,3,1,1,\n" +
		"4880,1,1,10,10,8,\"v_mov_b32_e32 v0, 1\"\n"
	c := NewControl()
	if err := readControl(t, c, "c1.csv", c1); err != nil {
		t.Fatal(err)
	}
	if err := readControl(t, c, "c2.csv", c2); err != nil {
		t.Fatal(err)
	}
	if msgs := f.Validate(c); len(msgs) != 0 {
		t.Fatalf("exact control: %q", msgs)
	}
	if e := f.Entry(pc(1, 4872)); e.ExpHit != 1 || e.ExpLatency != 6 || e.ExpStall != 2 || e.ExpIdle != 2 {
		t.Errorf("expectations of 4872 = %+v", e)
	}

	// Now add a wrong control row, a control PC never hit, and trace a PC
	// no control has.
	c3 := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle\n" +
		"1,4864,s_load,1,0,0,0\n" +
		"5,0,ghost,3,0,0,0\n" +
		"5,4,zero,0,0,0,0\n"
	if err := readControl(t, c, "c3.csv", c3); err != nil {
		t.Fatal(err)
	}
	f.AddWave(&wire.Wave{Instructions: []wire.Instruction{inst(pc(2, 4), 1, 0, 2)}})
	want := []string{
		"s_load_dwordx2 s[0:1], s[4:5], 0x0 - PC: 1,4864\nHitcount: 1/2, Stall: 0/0, Latency: 8/8, Idle: 0/0",
		" - PC: 2,4\nHitcount: 1/0, Stall: 0/0, Latency: 2/0, Idle: 1/0",
		"ghost - PC: 5,0\nHitcount: 0/3, Stall: 0/0, Latency: 0/0, Idle: 0/0",
	}
	got := f.Validate(c)
	if strings.Join(got, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Errorf("Validate:\n%s\nwant:\n%s", strings.Join(got, "\n--\n"), strings.Join(want, "\n--\n"))
	}
}

func TestControlErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "empty.csv: empty control CSV: a header row is required"},
		{"nohdr", "1,2,3\n", `nohdr.csv:1: not a stats CSV: the header has no "CodeObj" column`},
		{"badint", "CodeObj,Vaddr,Hitcount,Latency,Stall,Idle\n1,2,3,4,5,6\n1,010,1,1,1,1\n", `badint.csv:3: Vaddr "010": not a non-negative integer`},
		{"neg", "CodeObj,Vaddr,Hitcount,Latency,Stall,Idle\n-1,2,3,4,5,6\n", `neg.csv:2: CodeObj "-1": not a non-negative integer`},
		{"short", "CodeObj,Vaddr,Hitcount,Latency,Stall,Idle\n1\n", `short.csv:2: Vaddr "": not a non-negative integer`},
		{"count", "CodeObj,Vaddr,Hitcount,Latency,Stall,Idle\n1,2,x,4,5,6\n", `count.csv:2: Hitcount "x": not an integer`},
	} {
		err := readControl(t, NewControl(), c.name+".csv", c.text)
		var ce *ControlError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a ControlError", c.name, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %q, want prefix %q", c.name, err, c.want)
		}
	}
}

// FuzzReadControl: any input gives entries or an error, never a panic.
func FuzzReadControl(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.csv")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n1,0x10,a,1,2,3,4,s\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		c := NewControl()
		if err := c.Read(strings.NewReader(string(data)), "fuzz.csv"); err != nil {
			return
		}
		New(nil).Validate(c)
	})
}
