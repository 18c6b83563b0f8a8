#!/bin/sh
# Copies the canonical price table into the three clients, which each embed
# it (README.md). Run after editing model_prices.json; each client's tests
# fail while its copy differs.
set -eu
cd "$(dirname "$0")"
cp model_prices.json ../go/model_prices.json
cp model_prices.json ../python/expd/model_prices.json
cd ../js
node scripts/prices.mjs
npm run --silent build
