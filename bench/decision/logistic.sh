#!/bin/sh
# Logistic loss: passes against test log-loss and AUC for Newton-step ×
# CG-iteration settings (bench/ACCURACY.md, "The logistic loss's
# defaults"). Usage, from the repository root:
#   bench/decision/logistic.sh FALKON-OOC TRAIN TEST CENTERS "STEPS×ITERS ..."
# TRAIN is a store or a Parquet/CSV input with target y (ingested with
# --target y), TEST a Parquet/CSV input with y; each setting is one fit
# --loss logistic at --centers CENTERS, --val-fraction 0.2, --seed 1.
# Passes = Σ over Newton steps (1 + CG iterations) + the last step's line
# search + one per shortened step (ooc.Config.MaxPasses's count).
set -eu
fo=$1 train=$2 test=$3 m=$4 settings=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "| Newton steps × CG iterations | passes | test log-loss | test AUC | test error | fit s |"
echo "|---|---|---|---|---|---|"
for s in $settings; do
	steps=${s%x*} iters=${s#*x}
	t0=$(date +%s.%N)
	"$fo" fit --quiet --json --out "$dir/m.falkon" --loss logistic --newton-steps "$steps" --iters "$iters" \
		--centers "$m" --val-fraction 0.2 --seed 1 "$train" >"$dir/fit.json"
	t1=$(date +%s.%N)
	"$fo" predict --quiet --json --model "$dir/m.falkon" --out "$dir/p.csv" "$test" >"$dir/pred.json"
	passes=$(jq '([.training.newton_steps[] | 1 + .iterations] | add) + 1 + ([.training.newton_steps[] | select(.step != 1)] | length)' "$dir/m.falkon.json")
	jq -r --arg s "$steps × $iters" --arg p "$passes" --arg secs "$(echo "$t1 - $t0" | bc)" \
		'"| \($s) | \($p) | \(.log_loss * 10000 | round / 10000) | \(.auc * 10000 | round / 10000) | \(.error_rate * 10000 | round / 10000) | \($secs | tonumber | . * 10 | round / 10) |"' "$dir/pred.json"
done
