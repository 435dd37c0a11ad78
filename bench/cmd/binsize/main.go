// Command binsize builds the one-tool stdio server twice, with toolwire
// (examples/hello) and with go-sdk (bench/cmd/hello-go-sdk), and prints each
// binary's size, as built by default and stripped (-ldflags "-s -w"), and
// whether it links a database driver. Run from bench/: go run ./cmd/binsize.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

type target struct {
	name, dir, pkg string
}

var targets = []target{
	{"toolwire examples/hello", "..", "./examples/hello"},
	{"go-sdk bench/cmd/hello-go-sdk", ".", "./cmd/hello-go-sdk"},
}

// drivers are the import paths of database drivers a server without
// storage should not link.
var drivers = []string{"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/redis/go-redis", "database/sql"}

func main() {
	dir, err := os.MkdirTemp("", "binsize-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	fmt.Println("| server | default build | stripped (-s -w) | database drivers linked |")
	fmt.Println("|---|---|---|---|")
	for i, t := range targets {
		plain := filepath.Join(dir, fmt.Sprint(i, "-plain"))
		stripped := filepath.Join(dir, fmt.Sprint(i, "-stripped"))
		run(t.dir, "go", "build", "-trimpath", "-o", plain, t.pkg)
		run(t.dir, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", stripped, t.pkg)
		var linked []string
		for _, dep := range strings.Fields(run(t.dir, "go", "list", "-deps", t.pkg)) {
			for _, d := range drivers {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					linked = append(linked, dep)
				}
			}
		}
		if len(linked) == 0 {
			linked = []string{"none"}
		}
		fmt.Printf("| %s | %s | %s | %s |\n", t.name, size(plain), size(stripped), strings.Join(linked, ", "))
	}
}

func run(dir string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err))
	}
	return string(out)
}

func size(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		fail(err)
	}
	return fmt.Sprintf("%.2f MB (%d bytes)", float64(fi.Size())/1e6, fi.Size())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "binsize:", err)
	os.Exit(1)
}
