module github.com/attkit/attkit

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/itchyny/gojq v0.12.20
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/sys v0.41.0
)

require (
	github.com/itchyny/timefmt-go v0.1.9 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
