//go:build unix

package datadir

import (
	"errors"
	"os"

	"github.com/toolwire/toolwire/internal/filelock"
)

// Lock takes an exclusive, non-blocking lock on path (created mode
// 0600), held until the returned func runs or the process dies; a lock held
// elsewhere is ErrBusy.
func Lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrHeld) {
			return nil, ErrBusy
		}
		return nil, err
	}
	return func() {
		_ = filelock.Unlock(f)
		f.Close()
	}, nil
}
