package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode"
)

// subcommandsOf reads the subcommands a usage line names:
// "experiments list|get|create ..." and "runs start X | runs get X Y".
func subcommandsOf(usage string) []string {
	var subs []string
	for _, segment := range strings.Split(usage, " | ") {
		fields := strings.Fields(segment)
		if len(fields) < 2 || strings.ContainsAny(fields[1][:1], "[-") || unicode.IsUpper(rune(fields[1][0])) {
			continue
		}
		subs = append(subs, strings.Split(fields[1], "|")...)
	}
	return subs
}

// A new user's `expd experiments --help` answered "unknown subcommand":
// every command and every subcommand answers --help with exit 0, without
// credentials or a server.
func TestEveryCommandAndSubcommandAnswersHelp(t *testing.T) {
	run := func(name string, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), name, args, IO{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
		return code, out.String() + errOut.String()
	}
	subs := 0
	for _, name := range Commands() {
		for _, h := range []string{"--help", "-h", "help"} {
			code, out := run(name, h)
			if code != ExitOK || !strings.Contains(out, "usage: expd "+commands[name].usage) {
				t.Errorf("expd %s %s: exit %d\n%s", name, h, code, out)
			}
		}
		for _, sub := range subcommandsOf(commands[name].usage) {
			subs++
			code, out := run(name, sub, "--help")
			if code != ExitOK || strings.Contains(out, "unknown subcommand") || !strings.Contains(out, "expd "+name+" "+sub) {
				t.Errorf("expd %s %s --help: exit %d\n%s", name, sub, code, out)
			}
		}
	}
	if subs < 10 {
		t.Fatalf("found %d subcommands in the usage lines; the parser is broken", subs)
	}
}
