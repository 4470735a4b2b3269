/**
 * The stylesheet of report.html, inline so the page needs no other file: the colours of the
 * verdicts (passed, failed, error, skipped, blocked) and the filters that hide green rows with
 * CSS alone (the page runs no script).
 */
export const HTML_STYLE = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--passed:#1a7f37;--failed:#cf222e;--error:#9a6700;--skipped:#6e7781}
*{box-sizing:border-box}
body{margin:0;padding:24px clamp(12px,4vw,48px);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.6em;margin:0 0 8px}h2{font-size:1.3em;margin:32px 0 12px;padding-bottom:4px;border-bottom:1px solid var(--line)}h3{font-size:1.05em;margin:0 0 4px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{margin:4px 0 8px;padding:8px 10px;background:var(--soft);border:1px solid var(--line);border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:28em;overflow:auto}
table.transitions{width:auto}td.num.error{color:var(--error);font-weight:600}
.options{display:flex;flex-wrap:wrap;gap:0 18px;margin:0;padding:0;list-style:none}.opt{color:var(--muted)}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}.meta dt{color:var(--muted)}.meta dd{margin:0;overflow-wrap:anywhere}
.verdict{font-size:.6em;vertical-align:middle;padding:3px 10px;border-radius:12px;color:#fff}.verdict.passed{background:var(--passed)}.verdict.failed{background:var(--failed)}.verdict.error{background:var(--error)}
.totals{display:flex;flex-wrap:wrap;gap:12px;margin:20px 0 4px}.card{min-width:110px;padding:10px 14px;border:1px solid var(--line);border-radius:8px;border-top-width:4px}
.card b{display:block;font-size:1.7em;line-height:1.2}.card.passed{border-top-color:var(--passed)}.card.failed{border-top-color:var(--failed)}.card.error{border-top-color:var(--error)}.card.skipped{border-top-color:var(--skipped)}
.line{color:var(--muted);margin:4px 0 0}
.badge{display:inline-block;min-width:58px;text-align:center;padding:0 6px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;vertical-align:1px}
.badge.passed{background:var(--passed)}.badge.failed{background:var(--failed)}.badge.error{background:var(--error)}.badge.skipped{background:var(--skipped)}
.check{border:1px solid var(--line);border-left:5px solid var(--failed);border-radius:6px;padding:12px 14px;margin:0 0 16px}.check.error{border-left-color:var(--error)}
.where{color:var(--muted);margin:0 0 6px;font-size:.9em}.kind{font-style:italic}
.clauses{margin:4px 0 8px;padding-left:18px}.message{background:#fff8f8;border-color:#f5c2c7}.check.error .message{background:#fffbea;border-color:#eedc9a}
.evidence{margin:10px 0 0;padding-top:8px;border-top:1px dashed var(--line)}.evidence-head{margin:0 0 4px;font-weight:600}
.exchange{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:0 12px}.label{margin:4px 0 0;color:var(--muted);font-size:.8em;text-transform:uppercase;letter-spacing:.05em}
details{margin:8px 0}summary{cursor:pointer;color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:4px 0 8px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}thead th{background:var(--soft);font-size:.85em}
.num{text-align:right;white-space:nowrap}td.passed{color:var(--passed);font-weight:600}td.failed{color:var(--failed);font-weight:600}td.error{color:var(--error);font-weight:600}td.skipped{color:var(--skipped)}
tr.total th,tr.total td{font-weight:600;border-top:2px solid var(--line)}
.bar{display:inline-block;width:48px;height:8px;margin-right:6px;background:var(--soft);border:1px solid var(--line);border-radius:4px;overflow:hidden;vertical-align:middle}.bar span{display:block;height:100%;background:var(--passed)}
code.clause{background:var(--soft);padding:0 4px;border-radius:4px;white-space:nowrap}code.unknown{color:var(--failed);text-decoration:underline wavy}
.note{color:var(--muted);font-size:.88em}.none{color:var(--muted)}.counts{font-weight:400;color:var(--muted);font-size:.9em}
.warning{padding:8px 12px;border:1px solid #eedc9a;background:#fffbea;border-radius:6px}
tr.failed td:first-child,tr.error td:first-child{box-shadow:inset 3px 0 var(--failed)}
footer{margin-top:32px;color:var(--muted);font-size:.85em}
.verdict.interrupted{background:var(--error)}.verdict.inconclusive{background:var(--error)}.card.blocked{border-top-color:var(--error)}.card.findings{border-top-color:var(--failed)}
.badge.blocked{background:var(--error)}.badge.inconclusive{background:var(--error)}.check.inconclusive{border-left-color:var(--error)}.card.inconclusive{border-top-color:var(--error)}.check.blocked{border-left-color:var(--error)}
.finding{border:1px solid var(--line);border-left:5px solid var(--failed);border-radius:6px;padding:12px 14px;margin:0 0 16px;background:#fffdfd}
.fid{display:inline-block;padding:0 8px;margin-right:6px;border-radius:10px;background:var(--failed);color:#fff;font-size:.85em}
.replay{margin:4px 0}.group{border:1px solid var(--line);border-radius:6px;padding:4px 10px;margin:0 0 8px}.group.red{border-left:5px solid var(--failed)}
.group summary{color:var(--fg)}.filter{margin:0 0 10px}.filter label{margin-right:14px;cursor:pointer}
body:has(#show-failed:checked) #checks tr.passed,body:has(#show-failed:checked) #checks tr.skipped,body:has(#show-failed:checked) #checks .group.green{display:none}
body:has(#show-skipped:checked) #checks tr:not(.skipped),body:has(#show-skipped:checked) #checks .group:not(:has(tr.skipped)){display:none}
`;
