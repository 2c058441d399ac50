package version

import (
	"fmt"
	"strconv"
	"strings"
)

// Setting is one flag or environment variable the function writes into the runtime sidecar,
// with the runtime contract that introduced it: a runtime of an older contract does not know
// it (docs/runtime-contract.md, "Skew"). Validation (SUI062) compares the contract of a
// pinned runtime image with the newest Since among the settings a sidecar carries.
type Setting struct {
	// Name is the flag as written, "--service", or the environment variable, "SPARKUI_APP_ID".
	Name string
	// Since is the contract that introduced it, MAJOR.MINOR.
	Since string
	// Changelog is the heading of the CHANGELOG.md entry that introduced it
	// (internal/sidecar's TestSettingsTable checks both directions).
	Changelog string
}

const (
	changelog10 = "Runtime contract 1.0 (sparkui 0.1.0)"
	changelog12 = "Runtime contract 1.2 (2026-12-06)"
)

// Settings is every setting the function writes, in one place next to RuntimeContract: a
// contract that adds a flag or variable adds its row here, in the same commit as its CHANGELOG
// entry. internal/sidecar's TestSettingsTable fails when a flag of sidecar.Config or a
// variable the function writes has no row.
var Settings = []Setting{
	{"--service", "1.0", changelog10},
	{"--app-id", "1.0", changelog10},
	{"--ui-port", "1.0", changelog10},
	{"--max-retries", "1.0", changelog10},
	{"--tls", "1.0", changelog10},
	{"--ssl-ui-port", "1.0", changelog10},
	{"--host-network", "1.0", changelog10},
	{"--external-uri", "1.0", changelog10},
	{"--role", "1.0", changelog10},
	{"--skip-ports", "1.0", changelog10},
	{"--ui-filters", "1.0", changelog10},
	{"--auth-bearer-file", "1.0", changelog10},
	{"--auth-header-file", "1.0", changelog10},
	{"--guard-label", "1.0", changelog10},
	{"--selector", "1.0", changelog10},
	{"--owner-reference", "1.0", changelog10},
	{"--events", "1.2", changelog12},
	{"POD_NAME", "1.0", changelog10},
	{"POD_NAMESPACE", "1.0", changelog10},
	{"POD_UID", "1.0", changelog10},
	{"HOST_IP", "1.0", changelog10},
	{"SPARKUI_APP_ID", "1.0", changelog10},
	{"SPARKUI_RUN_LABEL_VALUE", "1.0", changelog10},
	{"SPARKUI_HISTORY_URL", "1.0", changelog10},
	{"SPARKUI_REDIRECTOR_PORT", "1.0", changelog10},
}

// SettingSince is the contract that introduced the flag (--name) or variable; ok is false
// for a name this sparkui does not know (a newer contract's, or a misspelling).
func SettingSince(name string) (string, bool) {
	for _, s := range Settings {
		if s.Name == name {
			return s.Since, true
		}
	}
	return "", false
}

// Contract is a parsed MAJOR.MINOR.
type Contract struct{ Major, Minor int }

// ParseContract reads MAJOR.MINOR (decimal, no sign).
func ParseContract(s string) (Contract, error) {
	ma, mi, ok := strings.Cut(s, ".")
	a, err1 := strconv.ParseUint(ma, 10, 16)
	b, err2 := strconv.ParseUint(mi, 10, 16)
	if !ok || err1 != nil || err2 != nil {
		return Contract{}, fmt.Errorf("%q is not a runtime contract (MAJOR.MINOR)", s)
	}
	return Contract{int(a), int(b)}, nil
}

// MustContract is ParseContract for the constants of this package.
func MustContract(s string) Contract {
	c, err := ParseContract(s)
	if err != nil {
		panic(err)
	}
	return c
}

func (c Contract) String() string { return strconv.Itoa(c.Major) + "." + strconv.Itoa(c.Minor) }

// Less orders contracts.
func (c Contract) Less(d Contract) bool {
	return c.Major < d.Major || c.Major == d.Major && c.Minor < d.Minor
}

// PreContractTags are the runtime image tags published before the runtime had a contract of
// its own, when the image was tagged with sparkui's version (internal/version.RuntimeImage
// returned RuntimeRepository:Version from the first commit, c3844e1, to f20c404, which
// introduced contract 1.1; VERSION was 0.1.0 all along), with the contract they implement.
var PreContractTags = map[string]string{"0.1.0": "1.0"}

// ImageTagKind is how a runtime image reference names its contract.
type ImageTagKind int

const (
	// TagContract: a contract tag, contract-MAJOR.MINOR (possibly with a digest).
	TagContract ImageTagKind = iota
	// TagPreContract: a tag of PreContractTags.
	TagPreContract
	// TagDigestOnly: repository@sha256:…, no tag: what runs is whatever was pushed there.
	TagDigestOnly
	// TagNone: no tag and no digest: the registry's "latest", which may move.
	TagNone
	// TagUnknown: a tag of no scheme sparkui publishes (a mirror's own, "latest", "1", …).
	TagUnknown
)

// ImageContract reads the runtime contract an image reference names by its tag. With a tag and
// a digest the tag is taken at its word (the digest is what the kubelet pulls: a tag that
// lies is not caught). Only TagContract and TagPreContract give a contract.
func ImageContract(image string) (Contract, ImageTagKind) {
	ref, digest, _ := strings.Cut(image, "@")
	tag := ""
	// The tag follows the last ':' after the last '/' (a registry may carry a :port).
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		tag = ref[i+1:]
	}
	switch {
	case tag == "" && digest != "":
		return Contract{}, TagDigestOnly
	case tag == "":
		return Contract{}, TagNone
	case strings.HasPrefix(tag, RuntimeTagPrefix):
		if c, err := ParseContract(strings.TrimPrefix(tag, RuntimeTagPrefix)); err == nil {
			return c, TagContract
		}
	case PreContractTags[tag] != "":
		return MustContract(PreContractTags[tag]), TagPreContract
	}
	return Contract{}, TagUnknown
}
