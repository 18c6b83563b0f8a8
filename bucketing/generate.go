package bucketing

//go:generate go run ../testdata/bucketing/gen -o ../testdata/bucketing/vectors.json
//go:generate go run ../testdata/conformance/gen -o ../testdata/conformance/scenario.json
