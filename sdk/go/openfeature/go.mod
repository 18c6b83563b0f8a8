module github.com/expd/expd/sdk/go/openfeature

go 1.26.0

require github.com/expd/expd/sdk/go v0.0.0

require (
	github.com/open-feature/go-sdk v1.20.0
	go.uber.org/mock v0.6.0 // indirect
)

replace github.com/expd/expd/sdk/go => ../
