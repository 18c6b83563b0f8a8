module github.com/expd/expd/sdk/go/examples/growthbook

go 1.26.0

require (
	github.com/expd/expd/sdk/go v0.0.0
	github.com/growthbook/growthbook-golang v0.7.0
)

require github.com/tmaxmax/go-sse v0.10.0 // indirect

replace github.com/expd/expd/sdk/go => ../..
