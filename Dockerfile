# One image for `expd api`, `expd worker` and `expd migrate`, built with
# -tags noembedded: no embedded Temporal server or UI is linked (`expd dev`
# is not in this image; docs/operations.md gives both binaries' sizes).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
# go.mod replaces the Go client module (sdk/go) with the checkout's copy.
COPY sdk/go/go.mod sdk/go/
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -tags noembedded -trimpath -ldflags="-s -w" -o /out/expd ./cmd/expd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/expd /usr/local/bin/expd
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/expd"]
CMD ["api"]
