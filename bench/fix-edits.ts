/**
 * `npm run bench:fix`: the edit engine of the fix agents against a corpus of model-style replies.
 * Prints a Markdown table and totals; exits 1 if any reply was applied wrongly (a wrong patch is
 * worse than none), so a regression cannot pass unnoticed.
 */
import { runCorpus, type Verdict } from './fix-edits/run-corpus.ts';

const started = performance.now();
const results = runCorpus();
const elapsed = performance.now() - started;

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 110);
console.log('| case | outcome | detail |');
console.log('| --- | --- | --- |');
for (const result of results) console.log(`| ${result.name} | ${result.verdict} | ${cell(result.detail)} |`);

const verdicts: Verdict[] = ['applied exactly', 'refused as expected', 'applied wrongly', 'refused wrongly'];
const count = (verdict: Verdict): number => results.filter((result) => result.verdict === verdict).length;
console.log('');
console.log(`${results.length} replies in ${Math.round(elapsed)} ms (git apply --check included):`);
for (const verdict of verdicts) console.log(`  ${verdict.padEnd(20)} ${count(verdict)}`);
process.exitCode = count('applied wrongly') > 0 ? 1 : 0;
