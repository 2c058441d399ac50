// Package function is sparkui-fn's KRM function without its command line: the functionConfig
// (both forms, checked against the JSON Schema) and the processing of one ResourceList. The
// binary, tests and benchmarks all call Process, so they run the same code.
package function

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/transform"
	"github.com/sparkui/sparkui/validate"
)

// Options bound one run of the function.
type Options struct {
	// Applications says whether one transform (or uninstall) run may rewrite n applications
	// (inputlimit's Budget.Applications); nil: no bound. On its error Process returns it and
	// changes nothing.
	Applications func(n int) error
}

// Process is the whole function over one ResourceList: load the config, rewrite (in
// transform mode), then validate what comes out. Findings go to rl.Results; it never
// returns an error for bad input, so every item is always written back.
func Process(rl *framework.ResourceList) error { return ProcessWith(rl, Options{}) }

// ProcessWith is Process within o's bounds: the only error it returns for an input is one
// over them, and it does so before anything is rewritten. The items sparkui cannot read are
// found here (krmio.Screen) when the caller read the ResourceList itself (framework.Execute,
// tests); the binary's readers found them already and call Run.
func ProcessWith(rl *framework.ResourceList, o Options) error {
	return Run(rl, krmio.Screen(rl.Items), o)
}

// Run is ProcessWith on items already screened by krmio: held items are reported, left out
// of everything and put back where they were.
func Run(rl *framework.ResourceList, held *krmio.Held, o Options) error {
	cfg, results := LoadConfig(rl.FunctionConfig)
	rl.Results = append(rl.Results, results...)
	if HasError(results) {
		return nil
	}
	input := rl.Items
	rl.Results = append(rl.Results, held.Results...)
	defer func() { rl.Items = held.Restore(input, rl.Items) }()
	rl.Items = held.Readable(input)
	if dups := duplicateKeys(rl.Items); len(dups) > 0 {
		rl.Results = append(rl.Results, dups...)
		return nil
	}
	opts := app.CarrierOptions{SparkConf: cfg.SparkConf}
	if cfg.KubeflowInjection == "webhook" {
		opts.KubeflowInjection = app.InjectWebhook
	}
	// Read and edit the objects as YAML readers resolve their aliases and merge keys: an
	// edit through a shared node would reach every place naming it (yamlx/dealias.go).
	un := yamlx.Unalias(rl.Items)
	m := app.BuildWith(un.Items, opts)
	if cfg.Mode != "validate" && o.Applications != nil {
		if err := o.Applications(len(m.Apps)); err != nil {
			rl.Items = input
			return err
		}
	}
	if cfg.Mode == "transform" || cfg.Mode == "uninstall" {
		var items []*yaml.RNode
		var notes []transform.Note
		if cfg.Mode == "uninstall" {
			// Everything sparkui added goes; the rules then run on what is left, as after
			// a transform (docs/uninstall.md).
			items, notes = transform.Uninstall(m)
		} else {
			items, notes = transform.Apply(m, cfg.Transform)
		}
		rl.Items = un.Restore(items)
		for _, n := range notes {
			sev := framework.Info
			switch {
			case n.Error:
				sev = framework.Error
			case n.Warning:
				sev = framework.Warning
			}
			rl.Results = append(rl.Results, validate.NewResult(n.Rule, sev, n.Object, n.Field, n.Msg))
		}
		// Validate what is written, with the very rules validate mode uses.
		m = app.BuildWith(yamlx.Unalias(rl.Items).Items, opts)
	}
	ctx := &validate.Context{
		Model:                m,
		RBACManagedElsewhere: !cfg.Transform.CreateRBAC,
		History:              &cfg.Transform.History,
	}
	if cfg.Mode == "validate" {
		// Validate mode checks what a transform should already have produced (SUI060).
		ctx.Expect = &validate.Expect{UIService: cfg.Transform.ServiceEnabled}
	}
	rl.Results = append(rl.Results, validate.Run(ctx)...)
	return nil
}
