package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/kubectlplugin/uistate"
)

func newList(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "every application sparkui serves in the namespace (-A: all): carrier, state, port, link, age",
		Example: `  kubectl sparkui list -n analytics
  kubectl sparkui list -A -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, _, err := e.clients()
			if err != nil {
				return err
			}
			ns, err := e.namespace()
			if err != nil {
				return err
			}
			apps, err := uistate.Find(cmd.Context(), cs, ns)
			if err != nil {
				return err
			}
			return printList(e.streams.Out, e.streams.ErrOut, apps, e.output, e.all, e.now())
		},
	}
	c.Flags().BoolVarP(&e.all, "all-namespaces", "A", false, "list the applications of every namespace")
	c.Flags().StringVarP(&e.output, "output", "o", "", "output format: wide, json or yaml")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"wide", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// record is one application in -o json|yaml: the table's columns and what they come from.
type record struct {
	Namespace    string        `json:"namespace"`
	Name         string        `json:"name"`
	Service      string        `json:"service"`
	Carrier      string        `json:"carrier"`
	State        string        `json:"state"`
	Port         string        `json:"port,omitempty"`
	Link         string        `json:"link,omitempty"`
	Links        uistate.Links `json:"links"`
	Pod          string        `json:"pod,omitempty"`
	PodNote      string        `json:"podNote,omitempty"`
	Created      time.Time     `json:"created"`
	Claims       *claimRecord  `json:"claims,omitempty"`
	Disagreement string        `json:"disagreement,omitempty"`
}

// claimRecord is what the runtime's status annotations say (its claims, not the spec).
type claimRecord struct {
	State  string     `json:"state,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	Pod    string     `json:"pod,omitempty"`
	Port   string     `json:"port,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

func toRecord(a *uistate.App) record {
	r := record{Namespace: a.Namespace, Name: a.Name, Service: a.Service.Name, Carrier: a.Carrier, State: string(a.State),
		Port: a.Port, Link: a.Link(), Links: a.Links, PodNote: a.PodNote, Created: a.Service.CreationTimestamp.UTC(),
		Disagreement: a.Disagree}
	if a.Pod != nil {
		r.Pod = a.Pod.Name
	}
	if c := a.Claims; c != (uistate.Claims{}) {
		cr := &claimRecord{State: c.State, Pod: c.Pod, Port: c.Port, Reason: c.Reason}
		if !c.Since.IsZero() {
			s := c.Since.UTC()
			cr.Since = &s
		}
		r.Claims = cr
	}
	return r
}

func printList(out, errOut io.Writer, apps []*uistate.App, format string, all bool, now time.Time) error {
	switch format {
	case "json", "yaml":
		items := make([]record, 0, len(apps))
		for _, a := range apps {
			items = append(items, toRecord(a))
		}
		doc := map[string]any{"apiVersion": "sparkui.dev/v1alpha1", "kind": "ApplicationUIList", "items": items}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if format == "yaml" {
			if b, err = yaml.JSONToYAML(b); err != nil {
				return err
			}
		} else {
			b = append(b, '\n')
		}
		_, err = out.Write(b)
		return err
	case "", "wide":
	default:
		return fmt.Errorf("--output %q: want wide, json or yaml", format)
	}
	if len(apps) == 0 {
		fmt.Fprintln(errOut, "No applications served by sparkui found.")
		return nil
	}
	wide := format == "wide"
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	head := []string{"NAME", "CARRIER", "STATE", "PORT", "LINK", "AGE"}
	if all {
		head = append([]string{"NAMESPACE"}, head...)
	}
	if wide {
		head = append(head, "SERVICE", "POD", "SINCE", "REASON")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, a := range apps {
		state := string(a.State)
		if a.Disagree != "" {
			state += "!"
		}
		row := []string{a.Name, a.Carrier, state, dash(a.Port), dash(a.Link()), duration.HumanDuration(a.Age(now))}
		if all {
			row = append([]string{a.Namespace}, row...)
		}
		if wide {
			pod, since := "<none>", "-"
			if a.Pod != nil {
				pod = a.Pod.Name
			}
			if !a.Claims.Since.IsZero() {
				since = duration.HumanDuration(now.Sub(a.Claims.Since))
			}
			row = append(row, a.Service.Name, pod, since, dash(a.Claims.Reason))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range apps {
		if a.Disagree != "" {
			fmt.Fprintf(errOut, "Warning: %s/%s: %s (the spec is what routes traffic; the annotation is the application's own claim)\n", a.Namespace, a.Name, a.Disagree)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
