package sqttgen

import "strings"

// lineClass is the stitcher's category of an instruction text (spec §3.2).
type lineClass uint8

// Stitcher categories; the numbers are the specification's.
const (
	clsSkip        lineClass = 0
	clsSMEM        lineClass = 1
	clsSALU        lineClass = 2
	clsVMEM        lineClass = 3
	clsFLAT        lineClass = 4
	clsLDS         lineClass = 5
	clsVALU        lineClass = 6
	clsImmed       lineClass = 9
	clsBVH         lineClass = 12
	clsDontKnow    lineClass = 15
	clsBranch      lineClass = 16
	clsMFMAScale   lineClass = 18
	clsGFX9Barrier lineClass = 19
)

var prefixTable = []struct {
	cls      lineClass
	prefixes []string
}{
	{clsImmed, []string{"s_waitcnt", "s_wait_idle", "s_wait_kmcnt", "s_wait_loadcnt",
		"s_wait_storecnt", "s_wait_bvhcnt", "s_wait_expcnt", "s_wait_dscnt",
		"s_wait_samplecnt", "s_wait_event", "s_wait_xcnt", "s_wait_tensor", "s_wait_async",
		"s_nop", "s_sleep", "s_wakeup", "s_sendmsg", "s_setprio ", "s_set_inst",
		"s_inst_prefetch", "s_setkill", "s_version", "s_trap", "s_barrie", "s_endpgm",
		"s_icache_inv", "s_dcache_inv", "s_incperflvl", "s_sethalt", "s_decperflvl",
		"s_setvskip", "s_ttrace", "s_clause", "s_monitor"}},
	{clsSkip, []string{"s_wait_dep", "s_wait_alu", "buffer_nop", "s_set_vgpr", "s_delay"}},
	{clsSALU, []string{"s_setprio_inc", "s_call", "s_cvt", "s_getreg", "s_setreg", "s_add",
		"s_sub", "s_and", "s_or", "s_pack", "s_round", "s_denorm", "s_ctz", "s_cls", "s_cmp",
		"s_bit", "s_mov", "s_mul", "s_ash", "s_bf", "s_lsh", "s_min", "s_max", "s_abs",
		"s_cmov", "s_not", "s_nor", "s_wqm", "s_quadmask", "s_brev", "s_bcnt", "s_f",
		"s_sext", "s_cselect", "s_xor", "s_xnor", "s_nand", "s_getpc", "s_setpc", "s_swappc",
		"s_get_pc", "s_set_pc", "s_swap_pc"}},
	{clsSMEM, []string{"s_load", "s_buffer", "s_atomic", "s_atc", "s_scratch", "s_store",
		"s_dcache", "s_memrealtime", "s_prefetch"}},
	{clsVMEM, []string{"buffer_l", "buffer_s", "buffer_a", "buffer_g", "buffer_i", "buffer_w",
		"buffer_p", "buffer_d", "tbuffer_", "global_", "scratch_", "cluster_", "tensor_",
		"dds_", "image_l", "image_s", "image_a", "image_m", "image_g"}},
	{clsFLAT, []string{"flat_"}},
	{clsLDS, []string{"ds_", "lds_"}},
	{clsBVH, []string{"image_bvh"}},
}

type trieNode struct {
	next   map[byte]*trieNode
	cls    lineClass
	hasCls bool
}

var classTrie = func() *trieNode {
	root := &trieNode{}
	for _, row := range prefixTable {
		for _, p := range row.prefixes {
			n := root
			for i := 0; i < len(p); i++ {
				if n.next == nil {
					n.next = map[byte]*trieNode{}
				}
				c := n.next[p[i]]
				if c == nil {
					c = &trieNode{}
					n.next[p[i]] = c
				}
				n = c
			}
			n.cls, n.hasCls = row.cls, true
		}
	}
	return root
}()

// classify returns the stitcher category of an instruction text for gfx9,
// by the rules of spec §3.2: "branch" anywhere, then the v_ prefix, then the
// character walk over the prefix trie (unmatched characters are skipped),
// then the s_ fallback, then the gfx9 barrier post-rule.
func classify(text string) lineClass {
	if strings.Contains(text, "branch") {
		return clsBranch
	}
	if strings.HasPrefix(text, "v_") {
		if strings.HasPrefix(text, "v_mfma_scale_") {
			return clsMFMAScale
		}
		return clsVALU
	}
	c := lineClass(0)
	found := false
	n := classTrie
	for i := 0; i < len(text); i++ {
		if nx := n.next[text[i]]; nx != nil {
			n = nx
			if n.hasCls {
				c, found = n.cls, true
				break
			}
		}
	}
	if !found {
		if strings.HasPrefix(text, "s_") {
			c = clsSALU
		} else {
			c = clsDontKnow
		}
	}
	if c == clsImmed && strings.HasPrefix(text, "s_barrier") {
		c = clsGFX9Barrier
	}
	return c
}

// branchOffset parses the branch immediate of a BRANCH line as spec §3.3
// says: the last whitespace-separated word as a decimal integer (leading sign
// allowed, parsing stops at the first non-digit, no number gives 0), values
// of 32768 and more taken as negative 16-bit numbers. The target is
// address + 4 + 4*offset.
func branchOffset(text string) int64 {
	f := strings.Fields(text)
	if len(f) == 0 {
		return 0
	}
	w := f[len(f)-1]
	neg := false
	if len(w) > 0 && (w[0] == '-' || w[0] == '+') {
		neg = w[0] == '-'
		w = w[1:]
	}
	var v int64
	for i := 0; i < len(w) && w[i] >= '0' && w[i] <= '9'; i++ {
		v = v*10 + int64(w[i]-'0')
		if v > 1<<40 {
			break
		}
	}
	if neg {
		v = -v
	}
	if v >= 32768 {
		v -= 65536
	}
	return v
}
