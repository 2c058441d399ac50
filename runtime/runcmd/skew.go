package runcmd

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/verb"
)

// refusal is why the runtime will not bind: the function wrote a setting of a newer contract
// that no runtime may ignore (verb.RequiredFlagPrefix), and this runtime does not know it.
func refusal(s verb.Skew) string {
	return fmt.Sprintf("not binding the UI Service: the settings %s belong to a runtime contract newer than this runtime's (%s) "+
		"and must not be ignored; %s",
		strings.Join(s.Required, ", "), version.RuntimeContract, upgrade())
}

// upgrade is what to do about settings of a newer contract. This runtime cannot know which
// contract wrote them, only that it is at least the next minor of its own (within a major a
// contract only adds settings); the contract the Pod was rendered for is the rendering
// sparkui-fn's default runtime.image, which `sparkui-fn validate` names (SUI062).
func upgrade() string {
	c := version.MustContract(version.RuntimeContract)
	next := version.Contract{Major: c.Major, Minor: c.Minor + 1}
	return "upgrade runtime.image (sparkui-fn's functionConfig) to " + version.RuntimeRepository + ":" + version.RuntimeTag(next.String()) +
		" or newer: the image of the contract the function writes for, its default runtime.image (docs/runtime-contract.md)"
}

// notice is what the runtime tells users about settings it ignored, or "" when there are none.
func notice(s verb.Skew) string {
	if s.Empty() {
		return ""
	}
	var what []string
	if len(s.Flags) > 0 {
		what = append(what, "flags "+strings.Join(s.Flags, ", "))
	}
	if len(s.Env) > 0 {
		what = append(what, "environment "+strings.Join(s.Env, ", "))
	}
	return fmt.Sprintf("ignoring settings this runtime (contract %s) does not know: %s; they belong to a newer runtime contract "+
		"and are safe to ignore, so the UI Service is bound all the same, without what they add; "+
		"%s",
		version.RuntimeContract, strings.Join(what, "; "), upgrade())
}

// reportSkew says what was ignored where users look: the log, and the termination message
// (`kubectl describe pod`, the container status) through terminationLog. A later fatal reason
// overwrites it, which is the more urgent news.
func reportSkew(log *slog.Logger, terminationLog string, s verb.Skew) {
	msg := notice(s)
	if msg == "" {
		return
	}
	log.Warn(msg, "unknown_flags", s.Flags, "unknown_env", s.Env)
	if terminationLog != "" {
		if err := os.WriteFile(terminationLog, []byte(msg+"\n"), 0o644); err != nil {
			log.Warn("cannot write the termination log", "path", terminationLog, "err", err)
		}
	}
}
