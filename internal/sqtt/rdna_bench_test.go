package sqtt

import (
	"fmt"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// rdnaSynthTrace builds an RDNA trace (gen 10, 11 or 12) of rounds of 8
// concurrent waves (slots 0..7 of the target SIMD) running loopISA for
// iters iterations, plus 4 waves per round on other WGPs (occupancy only).
// Every token advances the clock by 1. It returns the trace and the
// number of instructions the waves hold (including the implicit
// s_endpgm MESSAGE).
func rdnaSynthTrace(gen, rounds, iters int) ([]byte, int) {
	version := map[int]int{10: 2, 11: 3, 12: 4}[gen]
	r := newRB(gen).header(version, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x1000)
	// The program as token kinds: s (INST code), v (VALU_INST), i (IMM_ONE).
	type step struct {
		kind byte
		code int
	}
	prog := []step{{'s', 1}, {'i', 0}}
	for i := 0; i < iters; i++ {
		br := 3 // JUMP
		if i == iters-1 {
			br = 4 // NEXT
		}
		prog = append(prog, step{'v', 0}, step{'v', 0}, step{'s', 0}, step{'s', 0}, step{'s', br})
	}
	prog = append(prog, step{'s', 47})
	insts := 0
	clock := int64(0)
	next := func() *rb { clock++; return r.at(clock) }
	for round := 0; round < rounds; round++ {
		for k := 0; k < 8; k++ {
			next().waveStart(0, 0, 0, k, 0, 0, 1)
		}
		for c := 1; c <= 4; c++ {
			next().waveStart(0, round%4, c, 0, 0, 0, 1)
		}
		for _, s := range prog {
			for k := 0; k < 8; k++ {
				switch s.kind {
				case 's':
					next().inst(k, s.code)
				case 'v':
					next().valu(k)
				case 'i':
					next().immOne(k)
				}
				insts++
			}
		}
		clock += 8
		for k := 0; k < 8; k++ {
			next().waveEnd(0, 0, 0, k)
			insts++ // the s_endpgm MESSAGE
		}
		for c := 1; c <= 4; c++ {
			next().waveEnd(0, round%4, c, 0)
		}
	}
	return r.pad(), insts
}

func TestRDNASynthTrace(t *testing.T) {
	for _, gen := range []int{10, 11, 12} {
		data, insts := rdnaSynthTrace(gen, 3, 50)
		got, err := decodeAll(t, data, newTable(0, loopISA...))
		if err != nil {
			t.Fatal(err)
		}
		waves, n, occ := 0, 0, 0
		for _, b := range got {
			switch b.Type {
			case wire.TypeWave:
				w := b.Waves[0]
				waves++
				n += len(w.Instructions)
				for i, in := range w.Instructions {
					if in.PC.Address == 0 {
						t.Fatalf("gfx%d wave %d instruction %d (%v) has no PC", gen, waves, i, in.Category)
					}
				}
				ins := w.Instructions
				if ins[len(ins)-1].PC.Address != 0x1028 || ins[len(ins)-1].Category != wire.CatMessage ||
					ins[6].PC.Address != 0x101c || ins[7].PC.Address != 0x100c {
					t.Fatalf("gfx%d wave %d: loop not followed", gen, waves)
				}
			case wire.TypeOccupancy:
				occ += len(b.Occupancy)
			case wire.TypeInfo:
				t.Errorf("gfx%d: info %v", gen, b.Info)
			}
		}
		if waves != 24 || n != insts || occ != 3*12*2 {
			t.Errorf("gfx%d: %d waves, %d instructions (want %d), %d occupancy records", gen, waves, n, insts, occ)
		}
	}
}

// BenchmarkDecodeRDNA decodes a synthetic RDNA trace per generation and
// reports throughput in MB/s and instructions per second (wall and CPU),
// allocations, and the peak heap above the input (sampled every 256
// callbacks). For a generated trace of real kernels, use BenchmarkDecode
// with SQTT_BENCH_TRACE and SQTT_BENCH_INDEX (scripts/gentrace -arch gfx12).
func BenchmarkDecodeRDNA(b *testing.B) {
	for _, gen := range []int{10, 11, 12} {
		b.Run(fmt.Sprintf("gfx%d", gen), func(b *testing.B) {
			data, _ := rdnaSynthTrace(gen, 200, 1000) // about 12 MB
			benchDecode(b, data, newTable(0, loopISA...), true)
		})
	}
}
