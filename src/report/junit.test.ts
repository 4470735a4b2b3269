import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { validateXML } from "xmllint-wasm";
import { collectFindings } from "./findings.js";
import { escapeXmlAttr, escapeXmlText, renderJunit, stripIllegalXmlChars } from "./junit.js";
import { checkFailedByF1, SAMPLE_SECRETS, sampleCheck, sampleRun } from "./test-support.js";

/**
 * A strict little XML 1.0 reader, enough for what renderJunit writes: one root, elements,
 * quoted attributes, text and the five entities plus character references. It throws on
 * anything malformed, so "parses" means "well-formed" for this output.
 */
interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const isNameChar = (ch: string) =>
  (ch >= "a" && ch <= "z") || (ch >= "A" && ch <= "Z") || (ch >= "0" && ch <= "9") || "-_.:".includes(ch);
const isSpace = (ch: string | undefined) => ch === " " || ch === "\t" || ch === "\n" || ch === "\r";

function parseXml(xml: string): XmlElement {
  for (const ch of xml)
    if (!isXmlChar(ch.codePointAt(0) ?? 0)) throw new Error(`illegal character U+${ch.codePointAt(0)?.toString(16)}`);
  let pos = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${pos}: ${JSON.stringify(xml.slice(pos, pos + 30))}`);
  };
  const skipSpace = () => {
    while (isSpace(xml[pos])) pos++;
  };
  const expectText = (s: string) => {
    if (!xml.startsWith(s, pos)) fail(`expected ${s}`);
    pos += s.length;
  };
  const readName = () => {
    const start = pos;
    while (pos < xml.length && isNameChar(xml[pos] ?? "")) pos++;
    if (pos === start) fail("expected a name");
    return xml.slice(start, pos);
  };
  const decode = (raw: string): string => {
    let out = "";
    for (let i = 0; i < raw.length; i++) {
      const ch = raw[i] ?? "";
      if (ch !== "&") {
        out += ch;
        continue;
      }
      const end = raw.indexOf(";", i);
      if (end < 0) fail("unterminated reference");
      const ref = raw.slice(i + 1, end);
      if (ref.startsWith("#x")) out += String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
      else if (ref.startsWith("#")) out += String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
      else if (ref in ENTITIES) out += ENTITIES[ref];
      else fail(`unknown entity &${ref};`);
      i = end;
    }
    return out;
  };
  const parseElement = (): XmlElement => {
    expectText("<");
    const element: XmlElement = { name: readName(), attrs: {}, children: [], text: "" };
    for (;;) {
      const hadSpace = isSpace(xml[pos]);
      skipSpace();
      if (xml.startsWith("/>", pos)) {
        pos += 2;
        return element;
      }
      if (xml[pos] === ">") {
        pos++;
        break;
      }
      if (!hadSpace) fail("expected space before an attribute");
      const name = readName();
      if (name in element.attrs) fail(`duplicate attribute ${name}`);
      expectText("=");
      const quote = xml[pos];
      if (quote !== '"' && quote !== "'") fail("expected a quoted value");
      const end = xml.indexOf(quote as string, pos + 1);
      if (end < 0) fail("unterminated attribute");
      const raw = xml.slice(pos + 1, end);
      if (raw.includes("<")) fail("< in an attribute value");
      element.attrs[name] = decode(raw);
      pos = end + 1;
    }
    for (;;) {
      if (xml.startsWith("</", pos)) {
        pos += 2;
        if (readName() !== element.name) fail(`mismatched end tag for <${element.name}>`);
        skipSpace();
        expectText(">");
        return element;
      }
      if (xml.startsWith("<!", pos) || xml.startsWith("<?", pos)) fail("unexpected markup declaration");
      if (xml[pos] === "<") {
        element.children.push(parseElement());
        continue;
      }
      const next = xml.indexOf("<", pos);
      if (next < 0) fail(`unclosed <${element.name}>`);
      const raw = xml.slice(pos, next);
      if (raw.includes("]]>")) fail("]]> in text");
      element.text += decode(raw);
      pos = next;
    }
  };
  if (xml.startsWith("<?xml")) {
    const end = xml.indexOf("?>");
    if (end < 0) fail("unterminated declaration");
    pos = end + 2;
  }
  skipSpace();
  const root = parseElement();
  skipSpace();
  if (pos !== xml.length) fail("content after the root element");
  return root;
}

const all = (root: XmlElement, name: string): XmlElement[] =>
  root.children.flatMap((child) => [...(child.name === name ? [child] : []), ...all(child, name)]);
const testcaseNamed = (root: XmlElement, title: string): XmlElement => {
  const found = all(root, "testcase").find((tc) => tc.attrs.name?.endsWith(title));
  if (!found) throw new Error(`no testcase ${title}`);
  return found;
};

describe("the XML checker used below", () => {
  test.for([
    ["mismatched tags", "<a><b></a></b>"],
    ["< in an attribute", "<a x='<'/>"],
    ["an unknown entity", "<a>&nbsp;</a>"],
    ["a bare ampersand", "<a>fish & chips</a>"],
    ["a control character", "<a>\u0001</a>"],
    ["two roots", "<a/><b/>"],
    ["an unclosed element", "<a><b/>"],
  ] as const)("rejects %s", ([, xml]) => {
    expect(() => parseXml(xml)).toThrow();
  });

  test("accepts and decodes a well-formed document", () => {
    const root = parseXml(`<?xml version="1.0"?>\n<a x="1 &amp; &#10;2"><b>&lt;ok&gt;</b></a>`);
    expect(root.attrs.x).toBe("1 & \n2");
    expect(root.children[0]?.text).toBe("<ok>");
  });
});

describe("renderJunit", () => {
  test("is well-formed: testsuites > testsuite per PROFILE section > testcase per check", () => {
    const run = sampleRun();
    const root = parseXml(renderJunit(run));
    expect(root.name).toBe("testsuites");
    const suites = root.children.filter((c) => c.name === "testsuite");
    const expected = [...new Set(run.checks.map((c) => (c.sections[0] ? `PROFILE ${c.sections[0]}` : c.suite)))];
    expect(suites.map((s) => s.attrs.name).sort()).toEqual(expected.sort());
    // sections in PROFILE order
    const numbers = suites.map((s) => Number(/§(\d+)/.exec(s.attrs.name ?? "")?.[1] ?? 99));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    for (const suite of suites)
      for (const tc of suite.children.filter((c) => c.name === "testcase")) expect(tc.attrs.classname).toBe(suite.attrs.name);
    expect(all(root, "testcase")).toHaveLength(run.checks.length);
    expect(root.attrs).toMatchObject({ tests: "7", failures: "2", errors: "1", skipped: "1" });
  });

  test("a testcase is classname = its PROFILE section, name = the title without the section list", () => {
    const tc = testcaseNamed(parseXml(renderJunit(sampleRun())), "a name of 101 code points is rejected naming the field");
    expect(tc.attrs).toMatchObject({
      classname: "PROFILE §4",
      name: "a name of 101 code points is rejected naming the field",
      time: "0.048",
      file: "suites/functional/limits.test.ts",
    });
  });

  test("a conformance failure is <failure>, a harness error is <error>, a skip is <skipped message>", () => {
    const root = parseXml(renderJunit(sampleRun()));
    const failure = testcaseNamed(root, "rejected naming the field").children.find((c) => c.name === "failure");
    expect(failure?.attrs).toEqual({
      message: "expected status 400 INVALID_REQUEST with details[].field = name",
      type: "ConformanceFailure",
    });
    expect(failure?.text).toContain("received status 201");
    const error = testcaseNamed(root, "succeed again after the reset time").children.find((c) => c.name === "error");
    expect(error?.attrs.type).toBe("HarnessError");
    const skipped = testcaseNamed(root, "carries a comment every 15 s").children.find((c) => c.name === "skipped");
    expect(skipped?.attrs.message).toBe("slow (≥ 15 s): enable with --slow");
    expect(all(testcaseNamed(root, "every response carries X-Request-Id"), "failure")).toHaveLength(0);
  });

  test("an inconclusive check is <skipped> naming what another client did, counted as skipped, never as failed", () => {
    const message = "2 agent(s) this run did not make appeared (x, y)";
    const run = sampleRun({ checks: [sampleCheck({ title: "lists in order", status: "inconclusive", message })], findings: [] });
    const root = parseXml(renderJunit(run));
    const tc = testcaseNamed(root, "lists in order");
    expect(tc.children.map((c) => [c.name, c.attrs.message])).toEqual([["skipped", `inconclusive: ${message}`]]);
    // the run is no verdict (exit 2): one <error> of its own says so, where the file alone would read green
    expect(root.attrs).toMatchObject({ tests: "2", failures: "0", errors: "1", skipped: "1" });
    const verdict = testcaseNamed(root, "the run judged the service");
    expect(verdict.attrs.classname).toBe("no verdict");
    expect(verdict.children.map((c) => [c.name, c.attrs.type])).toEqual([["error", "NoVerdict"]]);
    expect(verdict.children[0]?.attrs.message).toMatch(/^inconclusive: 1 check could not be judged, .*; no finding; exit 2$/);
  });

  test("a run that ran no check is an <error> of its own naming why, never a green file", () => {
    const skipped = sampleCheck({
      title: "a read-only key is refused writes",
      status: "skipped",
      message: "needs --read-only-key",
    });
    const cleanup = sampleCheck({ id: "run/cleanup", title: "cleanup", suite: "run", sections: [] });
    const root = parseXml(renderJunit(sampleRun({ checks: [skipped, cleanup], findings: [] })));
    expect(root.attrs).toMatchObject({ tests: "3", failures: "0", errors: "1", skipped: "1" });
    expect(testcaseNamed(root, "the run judged the service").children[0]?.attrs).toMatchObject({
      type: "NoVerdict",
      message: "nothing ran: the 1 check selected was skipped (needs --read-only-key); no verdict; exit 2",
    });
    // a run that judged: no such test case
    expect(all(parseXml(renderJunit(sampleRun({ checks: [cleanup, sampleCheck()], findings: [] }))), "error")).toHaveLength(0);
  });

  test("two checks of one section with one title are told apart by their describe paths; unique ones keep the short name", () => {
    const row = "§5 an unknown or malformed id is 404 AGENT_NOT_FOUND";
    const checks = [
      sampleCheck({ id: `PATCH /agents/{agentId} > ${row}`, title: row, sections: ["§5"], status: "failed", message: "x" }),
      sampleCheck({ id: `DELETE /agents/{agentId} > ${row}`, title: row, sections: ["§5"] }),
      sampleCheck({ id: "GET /agents > §5 lists", title: "§5 lists", sections: ["§5"] }),
      sampleCheck({ id: `GET /x > ${row}`, title: row, sections: ["§6"] }),
    ];
    const root = parseXml(renderJunit(sampleRun({ checks, findings: [] })));
    const names = all(root, "testcase").map((tc) => `${tc.attrs.classname} | ${tc.attrs.name}`);
    expect(names).toEqual([
      "PROFILE §5 | PATCH /agents/{agentId} > an unknown or malformed id is 404 AGENT_NOT_FOUND",
      "PROFILE §5 | DELETE /agents/{agentId} > an unknown or malformed id is 404 AGENT_NOT_FOUND",
      "PROFILE §5 | lists",
      "PROFILE §6 | an unknown or malformed id is 404 AGENT_NOT_FOUND",
    ]);
    expect(new Set(names).size).toBe(names.length);
  });

  test("a key split by a character the XML drops, or by a colour code, is scrubbed before it could be made whole", () => {
    const [key] = SAMPLE_SECRETS;
    const messages = [
      `received ${key.slice(0, 5)}\u0000${key.slice(5)}`,
      `received \u001b[31m${key.slice(0, 5)}\u001b[0m${key.slice(5)}`,
    ];
    for (const message of messages) {
      const run = sampleRun({ checks: [sampleCheck({ status: "failed", message })], findings: [] });
      const xml = renderJunit(run, { secrets: [...SAMPLE_SECRETS] });
      expect(xml).not.toContain(key);
      expect(xml).toContain("received ***");
    }
  });

  test("a run stopped by a signal is an <error> of its own: the file alone never reads as a green suite of fewer tests", () => {
    const run = sampleRun({ checks: [sampleCheck({ title: "burst" })], findings: [], interrupted: { done: 1, total: 437 } });
    const root = parseXml(renderJunit(run));
    const tc = testcaseNamed(root, "the run ended");
    expect(tc.children.map((c) => [c.name, c.attrs.type, c.attrs.message])).toEqual([
      ["error", "Interrupted", "interrupted: ran 1 of 437 checks; the rest were not run"],
    ]);
    expect(root.attrs).toMatchObject({ tests: "2", failures: "0", errors: "1" });
    expect(
      all(parseXml(renderJunit(sampleRun({ checks: [sampleCheck({ title: "burst" })], findings: [] }))), "error"),
    ).toHaveLength(0);
  });

  test("a pass with a note is a passed test case whose output says what it could not judge", () => {
    const note = "X-RateLimit-Remaining under concurrency (limits.headers) not judged on its 64 answers: W = 1 s";
    const root = parseXml(renderJunit(sampleRun({ checks: [sampleCheck({ title: "burst", note })], findings: [] })));
    const tc = testcaseNamed(root, "burst");
    expect(tc.children.map((c) => [c.name, c.text])).toEqual([["system-out", `note: ${note}`]]);
    expect(root.attrs).toMatchObject({ failures: "0", errors: "0", skipped: "0" });
  });

  test("system-out carries the curl and the request id of the evidence", () => {
    const tc = testcaseNamed(parseXml(renderJunit(sampleRun())), "rejected naming the field");
    const out = tc.children.find((c) => c.name === "system-out")?.text ?? "";
    expect(out).toContain("curl -sS -X POST 'http://127.0.0.1:43117/v1/agents'");
    expect(out).toContain("X-Request-Id: req_01HZX3");
  });

  test("<, &, \" and ' survive a round trip in names, attributes and text", () => {
    const title = `a <b> & "c" 'd' ]]> e`;
    const message = `expected <x attr="1"> & 'y'\nreceived ]]>`;
    const xml = renderJunit(sampleRun({ checks: [sampleCheck({ title, status: "failed", message })] }));
    const tc = testcaseNamed(parseXml(xml), title);
    expect(tc.attrs.name).toBe(title);
    const failure = tc.children[0];
    expect(failure?.attrs.message).toBe(`expected <x attr="1"> & 'y'`);
    expect(failure?.text).toBe(message);
  });

  test("characters illegal in XML 1.0 are stripped; newlines in attributes are kept as references", () => {
    const title = "bell\u0007 nul\u0000 esc\u001b ffff\uffff lone\ud800 emoji\u{1f600} tab\tend";
    const xml = renderJunit(
      sampleRun({ checks: [sampleCheck({ title, status: "skipped", message: "first line\nsecond line\r\n" })] }),
    );
    const tc = testcaseNamed(parseXml(xml), "end");
    expect(tc.attrs.name).toBe("bell nul esc ffff lone emoji\u{1f600} tab\tend");
    expect(tc.children[0]?.attrs.message).toBe("first line\nsecond line\r\n");
  });

  test("findings lead, one failed testcase each; a blocked check is skipped naming its finding", () => {
    const checks = [
      checkFailedByF1("§2 lists a page"),
      sampleCheck({
        id: "b",
        title: "§6 reads an agent",
        status: "blocked",
        blockedBy: "F1",
        clauseIds: ["auth.required"],
        sections: ["§6"],
      }),
    ];
    const { findings } = collectFindings([
      {
        check: sampleCheck({ id: "c" }),
        observations: [
          {
            check: "success-schema",
            clause: "envelope.list",
            expected: "pagination.hasMore: must be page < totalPages",
            received: "true",
            endpoint: "GET /agents",
            count: 2,
            evidence: { request: { method: "GET", url: "http://h/v1/agents", headers: {} }, curl: "curl 'http://h/v1/agents'" },
          },
        ],
      },
    ]);
    const root = parseXml(renderJunit(sampleRun({ checks, findings })));
    const [first] = root.children.filter((c) => c.name === "testsuite");
    expect(first?.attrs).toMatchObject({ name: "findings", tests: "1", failures: "1" });
    const finding = first!.children.find((c) => c.name === "testcase")!;
    expect(finding.attrs).toMatchObject({ classname: "findings", name: "F1 envelope.list" });
    expect(finding.children[0]?.attrs.message).toBe(
      "PROFILE §2 envelope.list: expected pagination.hasMore: must be page < totalPages; received true",
    );
    expect(testcaseNamed(root, "reads an agent").children[0]).toMatchObject({ name: "skipped" });
    expect(testcaseNamed(root, "reads an agent").children[0]?.attrs.message).toMatch(/^blocked by F1/);
    // the failed check F1 explains is one of its checks, not a second red test case
    expect(root.attrs).toMatchObject({ tests: "3", failures: "1", skipped: "2" });
    expect(testcaseNamed(root, "lists a page").children[0]?.attrs.message).toMatch(/^counted under F1/);
  });

  test("a finding names the file and line of the check that made it, else of the first it blocked", () => {
    const failed = sampleCheck({
      id: "a",
      title: "§2 lists a page",
      status: "failed",
      clauseIds: ["envelope.list"],
      sections: ["§2"],
      file: "suites/functional/list.test.ts",
      line: 42,
      message: "PROFILE §2 envelope.list: expected hasMore false; received true",
    });
    const blocked = sampleCheck({
      id: "b",
      title: "§6 reads an agent",
      status: "blocked",
      clauseIds: ["auth.required"],
      sections: ["§6"],
      file: "suites/functional/auth.test.ts",
      line: 7,
      message: "setup: POST /agents answered 500",
    });
    const { findings, checks } = collectFindings([failed, blocked].map((check) => ({ check, observations: [] })));
    const root = parseXml(renderJunit(sampleRun({ checks, findings })));
    const [findingSuite] = root.children.filter((c) => c.name === "testsuite");
    // the setup failure that kept a check from running leads (most important first)
    expect(findingSuite?.children.filter((c) => c.name === "testcase").map((c) => [c.attrs.file, c.attrs.line])).toEqual([
      ["suites/functional/auth.test.ts", "7"],
      ["suites/functional/list.test.ts", "42"],
    ]);
    expect(testcaseNamed(root, "reads an agent").attrs).toMatchObject({ file: "suites/functional/auth.test.ts", line: "7" });
  });

  test("validates against a JUnit XSD (the Ant/Jenkins schema CI servers read)", async () => {
    const run = sampleRun({
      checks: [...sampleRun().checks, sampleCheck({ id: "x", status: "blocked", blockedBy: "F1", line: 12 })],
      // the testsuite a stopped run adds, too
      interrupted: { done: 4, total: 437 },
    });
    const xml = renderJunit({ ...run, ...collectFindings(run.checks.map((check) => ({ check, observations: [] }))) });
    const schema = readFileSync(new URL("../../fixtures/junit.xsd", import.meta.url), "utf8");
    const result = await validateXML({
      xml: [{ fileName: "junit.xml", contents: xml }],
      schema: [{ fileName: "junit.xsd", contents: schema }],
    });
    expect(result.errors.map((e) => e.message)).toEqual([]);
    expect(result.valid).toBe(true);
    // and the schema is not a yes-man: a testcase without a name is refused
    const broken = xml.replace(/<testcase classname="[^"]*" name="[^"]*"/, "<testcase");
    const refused = await validateXML({
      xml: [{ fileName: "junit.xml", contents: broken }],
      schema: [{ fileName: "junit.xsd", contents: schema }],
    });
    expect(refused.valid).toBe(false);
  });

  test("an empty run is still a well-formed document, whose one test case says nothing ran", () => {
    const root = parseXml(renderJunit(sampleRun({ checks: [] })));
    expect(root.attrs).toMatchObject({ tests: "1", errors: "1" });
    expect(testcaseNamed(root, "the run judged the service").children[0]?.attrs.message).toMatch(/^nothing ran: /);
  });

  test("no key reaches the XML", () => {
    const xml = renderJunit(sampleRun(), { secrets: [...SAMPLE_SECRETS] });
    for (const secret of SAMPLE_SECRETS) expect(xml).not.toContain(secret);
    expect(xml).toContain("Authorization: Bearer ***");
  });
});

describe("escaping helpers", () => {
  test("text and attribute escaping", () => {
    expect(escapeXmlText(`<a & b>`)).toBe("&lt;a &amp; b&gt;");
    expect(escapeXmlAttr(`"it's"\n`)).toBe("&quot;it&apos;s&quot;&#10;");
    expect(stripIllegalXmlChars("a\u0000b\u0008c\u000bd\u000ce\u001ff\tg\uFFFEh")).toBe("abcdef\tgh");
  });
});
