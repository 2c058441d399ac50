package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// plainStream reads stdin when it is a plain multi-document stream (`kustomize build … |
// sparkui-fn`) rather than a ResourceList. kyaml's reader annotates every object of such a
// stream with config.kubernetes.io/index and internal.config.kubernetes.io/index and its writer
// keeps them, so they would reach what is then applied; this path reads without them. ok is
// false for a ResourceList, and for input kyaml cannot read, which the KRM path then reports
// as it always has.
func plainStream(data []byte) (items []*yaml.RNode, ok bool) {
	if docs, ok := yamlx.JSONStream(data); ok {
		// One document per JSON value: JSON is YAML, and each stays a flow mapping.
		parts := make([][]byte, len(docs))
		for i, d := range docs {
			parts[i] = d.Text
		}
		data = bytes.Join(parts, []byte("\n---\n"))
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil || r.WrappingKind != "" || len(items) == 0 {
		return nil, false
	}
	return items, true
}

// runPlain runs the function on a plain stream and writes the objects back as a plain stream,
// with no annotation the input did not carry, and every result on stderr (a stream has no
// results field). A document that is not a Kubernetes object
// (no apiVersion or no kind: `hello: world`) is an error result (SUI030), as in a
// ResourceList and in `sparkui-fn validate`, and is written back as it came.
func runPlain(items []*yaml.RNode, opts function.Options, stdout, stderr io.Writer) int {
	rl := &framework.ResourceList{Items: items}
	if err := function.ProcessWith(rl, opts); err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	out, err := encodeItems(rl.Items)
	if err != nil {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1
	}
	stdout.Write(out)
	return reportAll(rl.Results, stderr)
}

// isStandalone: `sparkui-fn CONFIG FILE… [-]`, kyaml's standalone mode (the first argument is
// the functionConfig file, the others input files, "-" standard input), without flags.
func isStandalone(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "validate", "version", "help", "completion":
		return false
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" {
			return false
		}
	}
	return true
}

// runStandalone runs standalone mode as kyaml's command does (the files concatenated in order,
// standard input first where "-" is given; the output a plain stream with kyaml's index and
// sequence-indent annotations cleared), but written by encodeItems: kyaml's writer uses one
// YAML encoder for the whole stream, whose events are all kept (3 GB of peak memory for
// 5,000 kubeflow applications). done is false when the input is not a plain stream sparkui
// reads (a ResourceList or List in a file, no object, unreadable YAML): kyaml's command then
// runs as it always has, on rest, the bytes already read.
func runStandalone(args []string, stdin io.Reader, budget *inputlimit.Budget, opts function.Options, stdout, stderr io.Writer) (code int, done bool, rest io.Reader) {
	fail := func(err error) (int, bool, io.Reader) {
		fmt.Fprintln(stderr, "sparkui-fn:", err)
		return 1, true, nil
	}
	cfg, err := budget.ReadFile(args[0])
	if err != nil {
		return fail(fmt.Errorf("unable to read configuration file %q: %w", args[0], err))
	}
	fc, err := yaml.Parse(string(cfg))
	if err != nil {
		return fail(fmt.Errorf("unable to parse configuration file %q: %w", args[0], err))
	}
	var fromStdin, fromFiles []byte
	readStdin := false
	for _, p := range args[1:] {
		if p == "-" {
			if !readStdin && stdin != nil {
				readStdin = true
				if fromStdin, err = budget.ReadAll("standard input", stdin); err != nil {
					return fail(err)
				}
			}
			continue
		}
		b, err := budget.ReadFile(p)
		if err != nil {
			var tl *inputlimit.TooLarge
			if errors.As(err, &tl) {
				return fail(err)
			}
			return fail(fmt.Errorf("unable to read input file %s: %w", p, err))
		}
		fromFiles = append(fromFiles, b...)
	}
	data := append(fromStdin, fromFiles...)
	items, ok := plainStream(data)
	if !ok {
		return 0, false, bytes.NewReader(data)
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: fc}
	if err := function.ProcessWith(rl, opts); err != nil {
		return fail(err)
	}
	for i, it := range rl.Items {
		if function.Unreadable(it, i) != nil {
			continue
		}
		// The annotations kio.ByteWriter clears without KeepReaderAnnotations, the legacy one
		// included: an object carrying it in the input loses it in kyaml's standalone output.
		//lint:ignore SA1019 cleared exactly as kyaml's writer clears it
		for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} {
			if _, err := it.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return fail(err)
			}
		}
	}
	out, err := encodeItems(rl.Items)
	if err != nil {
		return fail(err)
	}
	stdout.Write(out)
	return reportAll(rl.Results, stderr), true, nil
}
