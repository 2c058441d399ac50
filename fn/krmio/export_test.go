package krmio

// WriterInputs are the inputs of the writer fuzzers, for the tests of package krmio_test.
var WriterInputs = writerInputs
