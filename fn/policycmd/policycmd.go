// Package policycmd is `sparkui-fn policy`: it prints the ValidatingAdmissionPolicies and
// bindings that enforce sparkui's single-object rules in a cluster (package validate/policy).
package policycmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparkui/sparkui/fn/validatecmd"
	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/validate/policy"
)

// ExitUsage is the exit status of a bad flag or argument, as validate's.
const ExitUsage = 2

// Help is `sparkui-fn policy --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-fn policy",
	Short: "print the admission policies that enforce sparkui's single-object rules in a cluster",
	Usage: []string{"sparkui-fn policy"},
	Long: `Writes, on stdout, one ValidatingAdmissionPolicy and one ValidatingAdmissionPolicyBinding
(admissionregistration.k8s.io/v1, Kubernetes 1.30 or later) for each way a rule that looks at
one object is checked. Rules enforced:
  ` + strings.Join(ruleIDs(), ", ") + `
An error rule's binding denies (validationActions: [Deny]), a warning's warns ([Warn]); every
message starts with the rule id, as the function's results do. The rules that need several
objects at once (a Service and the Pod it selects, RBAC, a conf in a ConfigMap) stay with the
function and validate: an admission request carries one object. Policies and bindings are
cluster-scoped, named sparkui-<rule>-<scope>, and labelled app.kubernetes.io/managed-by:
sparkui.`,
	Examples: []string{
		"sparkui-fn policy | kubectl apply -f -",
		"# remove them",
		"sparkui-fn policy | kubectl delete -f -",
	},
	Exit: []cli.Exit{
		{Code: 0, Meaning: "the policies were written"},
		{Code: 1, Meaning: "they could not be written"},
		{Code: ExitUsage, Meaning: "a bad flag or an argument (the command takes none)"},
	},
	See: "docs/admission.md, docs/rules.md",
}

// ExitCode is returned by the command for a non-zero exit status.
type ExitCode = validatecmd.ExitCode

func ruleIDs() []string {
	var out []string
	for _, r := range policy.Enforced() {
		out = append(out, r.ID)
	}
	return out
}

// New is the cobra command.
func New() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "policy",
		Short:         "Print the admission policies that enforce sparkui's single-object rules",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				fmt.Fprintf(c.ErrOrStderr(), "sparkui-fn policy: takes no argument, got %q%s\n", args[0], cli.HelpHint)
				return ExitCode(ExitUsage)
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			y, err := policy.YAML()
			if err == nil {
				_, err = c.OutOrStdout().Write(y)
			}
			if err != nil {
				fmt.Fprintln(c.ErrOrStderr(), "sparkui-fn policy:", err)
				return ExitCode(1)
			}
			return nil
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), Help.Render(validatecmd.Flags(c.Flags())))
	})
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(c.ErrOrStderr(), "sparkui-fn policy: %v%s\n", err, cli.HelpHint)
		return ExitCode(ExitUsage)
	})
	return cmd
}
