package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/kubectlplugin/uistate"
)

// ReportingController is the reportingController of the Events the runtime records (design:
// "Events the runtime records are reported by sparkui-runtime and regard the driver Pod").
const ReportingController = "sparkui-runtime"

// maxEvents keeps why on one screen.
const maxEvents = 8

func newWhy(e *env) *cobra.Command {
	return &cobra.Command{
		Use:               "why APP",
		Short:             "one screen on APP's UI: the Service's state and reason, the runtime's Events, the sidecar's termination message, the checks that fail",
		Example:           `  kubectl sparkui why spark-pi -n analytics`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: e.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, cs, _, err := e.oneApp(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return why(cmd.Context(), e.streams.Out, cs, a, e.now())
		},
	}
}

func why(ctx context.Context, out io.Writer, cs kubernetes.Interface, a *uistate.App, now time.Time) error {
	ago := func(t time.Time) string { return duration.HumanDuration(now.Sub(t)) + " ago" }
	tw := tabwriter.NewWriter(out, 0, 8, 1, ' ', 0)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("Application", a.Name+" (namespace "+a.Namespace+")")
	line("Carrier", a.Carrier)
	p := a.Service.Spec.Ports[0]
	line("UI Service", fmt.Sprintf("%s (%s, port %d %s)", a.Service.Name, a.Service.Spec.Type, p.Port, p.Name))
	state := string(a.State)
	switch a.State {
	case uistate.Bound:
		state += " to port " + a.Port
	case uistate.HandedOff:
		state += " to the History Server redirector (port " + a.Port + ")"
	case uistate.Waiting:
		state += " (no selector: the runtime has not bound it)"
	case uistate.Withdrawn:
		state += " (a selector that matches nothing)"
	}
	line("State", state+", from the Service's spec")
	c := a.Claims
	switch {
	case a.Disagree != "":
		line("Claims", "DISAGREE: "+a.Disagree+" (the annotations are the application's own claims)")
	case c.State == "":
		line("Claims", "none (no "+uistate.AnnotationUIState+" annotation)")
	default:
		s := c.State
		if !c.Since.IsZero() {
			s += " since " + ago(c.Since)
		}
		if uistate.NextWaiting(a.State, c) {
			line("Claims", s+": the application's next driver Pod waits to bind it (the spec is an earlier Pod's withdrawal)")
		} else {
			line("Claims", s+", agreeing with the spec")
		}
	}
	if a.ClaimProblem != "" {
		line("Claims problem", a.ClaimProblem)
	}
	if c.Reason != "" {
		line("Reason", c.Reason)
	}
	line("Link", dash(a.Link()))
	if a.Pod == nil {
		line("Driver Pod", "none ("+a.PodNote+")")
	} else {
		line("Driver Pod", fmt.Sprintf("%s (%s, %s; %s)", a.Pod.Name, a.Pod.Status.Phase, ago(a.Pod.CreationTimestamp.Time), a.PodNote))
		if msg, how, ok := podTerminated(a.Pod); ok {
			line("Sidecar", sidecar.ContainerName+" "+how)
			if msg != "" {
				line("Termination msg", msg)
			} else {
				line("Termination msg", "none")
			}
		} else {
			line("Sidecar", "none: the Pod has no "+sidecar.ContainerName+" container")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(out)
	if a.Pod == nil {
		fmt.Fprintln(out, "Events: no driver Pod")
	} else if err := printEvents(ctx, out, cs, a.Pod, ago); err != nil {
		return err
	}

	fmt.Fprintln(out)
	results, note, err := checks(ctx, cs, a)
	if err != nil {
		return err
	}
	switch {
	case note != "":
		fmt.Fprintln(out, "Checks: "+note)
	case len(results) == 0:
		fmt.Fprintln(out, "Checks: none fails (sparkui's rules on the live objects)")
	default:
		fmt.Fprintln(out, "Checks that fail (sparkui's rules on the live objects):")
		for _, r := range results {
			fmt.Fprintf(out, "  %s %s\n", r.Severity, r.Message)
		}
	}
	return nil
}

// printEvents lists the Events regarding the driver Pod that the runtime reported, newest
// last (as kubectl describe), at most maxEvents.
func printEvents(ctx context.Context, out io.Writer, cs kubernetes.Interface, pod *corev1.Pod, ago func(time.Time) string) error {
	// regarding.uid is a selectable field of events.k8s.io/v1 Events (kubernetes
	// pkg/apis/events/v1/conversion.go); reportingController is filtered here.
	l, err := cs.EventsV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "regarding.uid=" + string(pod.UID)})
	if err != nil {
		fmt.Fprintf(out, "Events: cannot list: %v\n", err)
		return nil
	}
	var evs []eventsv1.Event
	for _, ev := range l.Items {
		if ev.ReportingController == ReportingController && ev.Regarding.UID == pod.UID {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		fmt.Fprintf(out, "Events: none reported by %s regarding Pod %s\n", ReportingController, pod.Name)
		return nil
	}
	sort.SliceStable(evs, func(i, j int) bool { return lastSeen(evs[i]).Before(lastSeen(evs[j])) })
	if len(evs) > maxEvents {
		evs = evs[len(evs)-maxEvents:]
	}
	fmt.Fprintf(out, "Events (reported by %s, regarding Pod %s):\n", ReportingController, pod.Name)
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  LAST SEEN\tTYPE\tREASON\tMESSAGE")
	for _, ev := range evs {
		n := ""
		if ev.Series != nil && ev.Series.Count > 1 {
			n = fmt.Sprintf(" (x%d)", ev.Series.Count)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", ago(lastSeen(ev)), ev.Type, ev.Reason, strings.TrimSpace(ev.Note)+n)
	}
	return tw.Flush()
}

func lastSeen(ev eventsv1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.DeprecatedLastTimestamp.IsZero():
		return ev.DeprecatedLastTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
