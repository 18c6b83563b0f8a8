module github.com/expd/expd/sdk/go

go 1.22
