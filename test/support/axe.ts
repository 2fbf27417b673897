import { expect } from 'chai';
import fs from 'node:fs';
import type { Page } from 'playwright-core';

// axe-core, run inside a Playwright page. Its source is evaluated through the DevTools protocol, which
// the console's CSP (no inline scripts) does not apply to, so the page is tested exactly as served.

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  helpUrl: string;
  nodes: { target: string[]; html: string; failureSummary?: string }[];
}

/** The serious and critical violations of the WCAG 2.x A/AA rules (and axe's best practices) on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations: AxeViolation[] = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** One line per violation and element, for an assertion message. */
export const describeViolations = (where: string, violations: AxeViolation[]) =>
  violations.flatMap((violation) =>
    violation.nodes.map((node) => `${where}: ${violation.id} (${violation.impact}) ${violation.help} at ${node.target.join(' ')}: ${node.html.slice(0, 160)}`),
  );

/** Fails, listing them, when axe finds a serious or critical violation on the page. */
export async function expectAccessible(page: Page, where: string) {
  const violations = await seriousViolations(page);
  expect(violations, describeViolations(where, violations).join('\n')).to.deep.equal([]);
}
