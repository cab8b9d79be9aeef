#!/bin/sh
# The table of bench/ACCURACY.md's "Decisions on imbalanced data": the
# squared loss, the squared loss with balanced class weights and the
# logistic loss, each with the default threshold (p ≥ 0.5 on calibrated
# probabilities) and --threshold f1, fitted on the set of
# bench/decision (about 5 % positives) through the command line as a user
# runs it, and scored on its test rows.
#
# Usage, from the repository root: bench/decision/run.sh [DIR]
set -eu
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
go build -o "$dir/falkon-ooc" ./cmd/falkon-ooc
go run ./bench/decision -out "$dir"
fo="$dir/falkon-ooc"
rm -rf "$dir/train.store"
"$fo" ingest --quiet --out "$dir/train.store" --target y --exclude id "$dir/train.csv" >/dev/null
echo "| loss | class weights | --threshold | p(yes) ≥ | precision (yes) | recall (yes) | F1 (yes) | balanced accuracy | AUC | PR-AUC | log-loss | rows whose label ≠ [p(yes) ≥ threshold] | rows whose score's sign ≠ [p(yes) ≥ 0.5] |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for v in squared balanced logistic; do
	for th in default f1; do
		flags="--centers 1000 --val-fraction 0.2 --seed 1"
		weights=none
		loss=squared
		case $v in
		balanced) flags="$flags --class-weight balanced" weights=balanced ;;
		logistic) flags="$flags --loss logistic" loss=logistic ;;
		esac
		[ "$th" = f1 ] && flags="$flags --threshold f1"
		m="$dir/$v-$th.falkon"
		rm -f "$m" "$dir/$v-$th.csv" "$dir/$v-$th.scores.csv"
		# shellcheck disable=SC2086
		"$fo" fit --quiet --out "$m" $flags "$dir/train.store" >/dev/null
		"$fo" predict --quiet --model "$m" --proba --out "$dir/$v-$th.csv" --json "$dir/test.csv" >"$dir/$v-$th.json"
		"$fo" predict --quiet --model "$m" --out "$dir/$v-$th.scores.csv" "$dir/test.csv" >/dev/null
		t=$(jq -r '.decision.threshold' "$dir/$v-$th.json")
		# y_pred,p_no,p_yes: the label against p(yes) ≥ t.
		disagree=$(awk -F, -v t="$t" 'NR > 1 && (($1 == "yes") != ($3 + 0 >= t + 0)) { n++ } END { print n + 0 }' "$dir/$v-$th.csv")
		# y_pred,score beside p_yes: the old label (score > 0) against p ≥ ½.
		old=$(paste -d, "$dir/$v-$th.scores.csv" "$dir/$v-$th.csv" | awk -F, 'NR > 1 && (($2 + 0 > 0) != ($5 + 0 >= 0.5)) { n++ } END { print n + 0 }')
		jq -r --arg loss "$loss" --arg w "$weights" --arg th "$th" --arg d "$disagree" --arg old "$old" '
			def f: if . == null then "-" else (. * 10000 | round / 10000 | tostring) end;
			(.per_class[] | select(.class == "yes")) as $c |
			"| \($loss) | \($w) | \($th) | \(.decision.threshold | f) | \($c.precision | f) | \($c.recall | f) | \($c.f1 | f) | \(.balanced_accuracy | f) | \(.auc | f) | \(.pr_auc | f) | \(.log_loss | f) | \($d) of \(.rows) | \($old) |"' "$dir/$v-$th.json"
	done
done
