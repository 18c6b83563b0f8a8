package bucketing

//go:generate go run ../testdata/bucketing/gen -o ../testdata/bucketing/vectors.json
