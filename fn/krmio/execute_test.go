package krmio_test

import (
	"bytes"
	"testing"

	"github.com/sparkui/sparkui/fn/function"
	"github.com/sparkui/sparkui/fn/krmio"
	"github.com/sparkui/sparkui/internal/inputlimit"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestReadWriteAsFrameworkExecute: krmio's Reader and Writer around the function (what the
// binary runs for a ResourceList or List on stdin) write what framework.Execute writes with
// the same processor, items and results, and fail alike.
func TestReadWriteAsFrameworkExecute(t *testing.T) {
	for _, in := range krmio.WriterInputs(t) {
		var want bytes.Buffer
		wantErr := framework.Execute(framework.ResourceListProcessorFunc(function.Process), &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &want, KeepReaderAnnotations: true})
		r := &krmio.Reader{Stdin: bytes.NewReader(in), Budget: inputlimit.NewBudget(0)}
		items, err := r.Read()
		if err != nil || (r.Form != krmio.ResourceList && r.Form != krmio.List) {
			continue // not a wrapped input
		}
		rl := &framework.ResourceList{Items: items, FunctionConfig: r.FunctionConfig}
		gotErr := function.Run(rl, r.Held, function.Options{})
		w := &krmio.Writer{Reader: r, Results: rl.Results}
		if gotErr == nil {
			gotErr = w.Write(rl.Items)
		}
		got := w.Bytes()
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("error %v, framework.Execute: %v\ninput:\n%s", gotErr, wantErr, in)
		}
		if gotErr == nil && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("wrote:\n%s\nframework.Execute writes:\n%s\ninput:\n%s", got, want.Bytes(), in)
		}
	}
}
