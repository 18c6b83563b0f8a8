package main

import (
	"os"
	"path/filepath"
	"testing"
)

// expd dev keeps one secrets key in its data dir: a judge key sealed in
// one run opens in the next, and the file is readable by its owner only.
func TestDevSecretsKeyIsKeptInTheDataDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), secretsKeyFile)
	first, err := devSecretsKey(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info, err)
	}
	sealed, err := first.Seal("sk-dev", "row")
	if err != nil {
		t.Fatal(err)
	}
	second, err := devSecretsKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := second.Open(sealed, "row"); err != nil || got != "sk-dev" {
		t.Fatalf("the next run opens %q, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := devSecretsKey(path); err == nil {
		t.Fatal("a damaged key file was accepted")
	}
}
