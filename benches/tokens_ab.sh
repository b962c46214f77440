#!/bin/bash
# Alternated rounds: before (no tokens), after with o200k (shipped config), after with tokens = none.
# usage: benches/tokens_ab.sh ROUNDS NEW_BIN   (from the repository root)
# Set up first: /tmp/tokens/pairpipe-before = a binary built before the token columns,
# /tmp/tokens/cuda200mb-before.toml = `git show 52054cc:pipelines/cuda200mb.toml`,
# /tmp/tokens/cuda200mb-none.toml = pipelines/cuda200mb.toml with tokenizer = "none".
N=${1:-6}; NEW=${2:-$HOME/.cache/pp-target-tokens/release/pairpipe}
for r in $(seq $N); do
  for v in before o200k none; do
    case $v in
      before) cmd="/tmp/tokens/pairpipe-before run /tmp/tokens/cuda200mb-before.toml";;
      o200k) cmd="$NEW run pipelines/cuda200mb.toml";;
      none) cmd="$NEW run /tmp/tokens/cuda200mb-none.toml";;
    esac
    /usr/bin/time -f "$v %e s wall %U user %S sys %M KB" $cmd --output /tmp/tokens/c200-$v --quiet 2>&1 | tail -1
  done
  uptime | sed 's/.*load/load/'
done
