package procs

import (
	"os"
	"runtime/pprof"
)

// WriteAllocs writes the running program's allocation profile to path: the
// child programs (srvmain, climain) call it as they exit, and the program
// that started them reads the file.
func WriteAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
