package main

// selectFlags choose the waves written (internal/waveselect); every other
// record is written as without them.
type selectFlags struct {
	Kernel   []string `help:"Write only the waves of the kernels matching this glob (path.Match: * ? [..], where * spans / too; repeatable): the kernel whose code range holds a wave's first PC, else its dispatch's. Occupancy, events and the other records stay whole." placeholder:"GLOB" sep:"none"`
	Dispatch []string `help:"Write only the waves launched by dispatch N of each trace (0-based position of its DISPATCH record; repeatable)." placeholder:"N" sep:"none"`
}
