package app

import (
	"strings"

	"github.com/sparkui/sparkui/internal/fieldpath"
)

// UpdateEffect is what applying a changed carrier over the one already in the cluster does to
// its application, as the carrier's controller (or the API server) reacts. Each adapter
// declares it from its controller's source (its onUpdate); `sparkui-fn validate --baseline`
// reports it.
type UpdateEffect int

const (
	// UpdateInPlace: the object takes the change and nothing running is restarted.
	UpdateInPlace UpdateEffect = iota
	// UpdateNextRun: the running driver is left alone; the next run or attempt uses it.
	UpdateNextRun
	// UpdateRestarts: the running driver is killed and started again (or a finished one
	// runs again).
	UpdateRestarts
	// UpdateNeverApplied: the object takes the change, but its controller never carries it
	// to the driver until the object is recreated; nothing says so.
	UpdateNeverApplied
	// UpdateRefused: the API server refuses the apply.
	UpdateRefused
)

// Update is what an apply of a changed carrier does: the effect and why, in words for a
// finding (the controller's behaviour and, where a GitOps tool turns it into something
// else, what that does).
type Update struct {
	Effect UpdateEffect
	Says   string
}

// OnUpdate is what applying this carrier does when the fields at changed (the result paths
// of its spec that differ from the applied object's, as internal/fieldpath formats them) are
// what changed. A carrier without a declared behaviour is taken as restarted: the cautious
// answer.
func (c *Carrier) OnUpdate(changed []string) Update {
	if c == nil || c.profile == nil || c.profile.onUpdate == nil {
		return Update{Effect: UpdateRestarts, Says: "sparkui does not know how this carrier's controller takes a change: assume its driver restarts"}
	}
	return c.profile.onUpdate(c, changed)
}

// onlyUnder reports that every path in changed is one of the fields whole, or under one.
func onlyUnder(changed []string, fields ...string) bool {
	for _, p := range changed {
		ok := false
		for _, f := range fields {
			if p == f || strings.HasPrefix(p, f+".") || strings.HasPrefix(p, f+"[") {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return len(changed) > 0
}

// basePath is the result path of the part of the carrier that holds the driver.
func (c *Carrier) basePath() string {
	p := ""
	for _, k := range c.base {
		p = fieldpath.Key(p, k)
	}
	return p
}
