package stripemock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

const modulePath = "github.com/stripe/stripe-mock"

var located struct {
	once sync.Once
	path string
	err  error
}

// binary finds stripe-mock, building it on first use in this test binary.
func binary() (string, error) {
	located.once.Do(func() { located.path, located.err = locate() })
	return located.path, located.err
}

func locate() (string, error) {
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("stripe-mock is not installed and no go command to build it: %w", err)
	}
	if gopath, err := exec.Command(goBin, "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(gopath))) {
			p := filepath.Join(dir, "bin", "stripe-mock")
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	return buildCached(goBin)
}

// buildCached installs stripe-mock into <user cache>/expd/stripe-mock/<Version>.
// It installs into a fresh directory and renames the result into place, so
// test binaries building at the same time never see a half-written file.
func buildCached(goBin string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "expd", "stripe-mock", Version)
	target := filepath.Join(dir, "stripe-mock")
	if isExecutable(target) {
		return target, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("create build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goBin, "install", modulePath+"@"+Version)
	cmd.Dir = tmp // outside any module: the @version form needs no go.mod
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w: %s", modulePath, Version, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "stripe-mock"), target); err != nil {
		return "", fmt.Errorf("move stripe-mock into the cache: %w", err)
	}
	return target, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
