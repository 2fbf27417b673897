import { createHash } from 'node:crypto';
import sanitizeHtml from 'sanitize-html';
import { isPng, PngError, readPng } from '../pdf/pngImage';

// An account's logo, as signers' browsers and mail clients will show it: a PNG whose header is read (and
// its size bounded) before a byte of it is inflated, or an SVG rebuilt from an allowlist of drawing
// elements and attributes, with nothing in it that runs, loads or links anything.

export const MAX_LOGO_BYTES = 200 * 1024;
/** A logo is drawn at a few hundred pixels: anything larger on a side is refused from its header alone. */
export const MAX_LOGO_SIDE = 2000;

export const logoTypes = ['image/png', 'image/svg+xml'] as const;
export type LogoType = (typeof logoTypes)[number];

export interface Logo {
  type: LogoType;
  content: Buffer;
  sha256: string;
}

const DATA_URL = /^data:(image\/png|image\/svg\+xml);base64,/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of `logo` as sent (base64, or a data: URL of a PNG or an SVG); a problem as "logo must …" otherwise. */
export function decodeLogo(logo: string): Buffer | string {
  const payload = logo.replace(DATA_URL, '');
  if (payload.length % 4 !== 0 || !BASE64.test(payload)) return 'logo must be base64, or a data: URL (data:image/png;base64,… or data:image/svg+xml;base64,…)';
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length === 0) return 'logo must not be empty';
  if (bytes.length > MAX_LOGO_BYTES) return `logo must be at most ${MAX_LOGO_BYTES / 1024} KB (this one is ${Math.ceil(bytes.length / 1024)} KB)`;
  return bytes;
}

/** A logo ready to store: a PNG checked, an SVG sanitized; a problem as "logo must …" for anything else. */
export function checkLogo(bytes: Buffer): Logo | string {
  if (isPng(bytes)) {
    try {
      readPng(bytes, { maxSide: MAX_LOGO_SIDE, maxPixels: MAX_LOGO_SIDE * MAX_LOGO_SIDE });
    } catch (error) {
      if (error instanceof PngError) return `logo must ${error.message}`;
      throw error;
    }
    return stored('image/png', bytes);
  }
  const svg = sanitizeSvg(bytes);
  if (svg === undefined) return 'logo must be a PNG or an SVG image';
  return stored('image/svg+xml', Buffer.from(svg, 'utf8'));
}

const stored = (type: LogoType, content: Buffer): Logo => ({ type, content, sha256: createHash('sha256').update(content).digest('hex') });

// Shapes, text, gradients, clips and masks, and <use> of what the file itself defines. Left out: script,
// style sheets, foreignObject, a, image, animation, filters (feImage loads), fonts.
const svgTags = [
  'svg',
  'g',
  'defs',
  'symbol',
  'use',
  'title',
  'desc',
  'path',
  'rect',
  'circle',
  'ellipse',
  'line',
  'polyline',
  'polygon',
  'text',
  'tspan',
  'linearGradient',
  'radialGradient',
  'stop',
  'clipPath',
  'mask',
  'pattern',
];
const svgAttributes = [
  'id',
  'class',
  'style',
  'xmlns',
  'xmlns:xlink',
  'version',
  'viewBox',
  'preserveAspectRatio',
  'width',
  'height',
  'x',
  'y',
  'x1',
  'y1',
  'x2',
  'y2',
  'cx',
  'cy',
  'r',
  'rx',
  'ry',
  'fx',
  'fy',
  'fr',
  'dx',
  'dy',
  'd',
  'points',
  'transform',
  'offset',
  'href',
  'xlink:href',
  'gradientUnits',
  'gradientTransform',
  'spreadMethod',
  'clipPathUnits',
  'maskUnits',
  'maskContentUnits',
  'patternUnits',
  'patternContentUnits',
  'patternTransform',
  'textLength',
  'lengthAdjust',
  'role',
  'aria-label',
  'aria-hidden',
  'focusable',
  ...presentationProperties(),
];

/** The SVG presentation properties a logo may set, as attributes or in a style attribute. */
function presentationProperties() {
  return [
    'fill',
    'fill-opacity',
    'fill-rule',
    'stroke',
    'stroke-width',
    'stroke-linecap',
    'stroke-linejoin',
    'stroke-miterlimit',
    'stroke-dasharray',
    'stroke-dashoffset',
    'stroke-opacity',
    'opacity',
    'color',
    'clip-path',
    'clip-rule',
    'mask',
    'stop-color',
    'stop-opacity',
    'font-family',
    'font-size',
    'font-weight',
    'font-style',
    'text-anchor',
    'dominant-baseline',
    'letter-spacing',
    'display',
    'visibility',
    'overflow',
    'vector-effect',
    'shape-rendering',
    'paint-order',
    'isolation',
    'mix-blend-mode',
  ];
}

// A value may point only inside the file: url(#id) and href="#id"; plain values have no url(, escape or at-rule.
const LOCAL_URL = /^\s*url\(\s*(['"]?)#[\w.:-]+\1\s*\)\s*$/i;
const PLAIN_VALUE = /^[^\\@()]*$/;
const COLOUR_FUNCTION = /^\s*(?:rgba?|hsla?)\(\s*[\d\s.,%]+\)\s*$/i;
const styleValues = [LOCAL_URL, PLAIN_VALUE, COLOUR_FUNCTION];

/** The attributes kept: a reference must stay inside the file; any url() must be url(#id), and no value holds a CSS escape. */
function localReferencesOnly(attribs: Record<string, string>) {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(attribs)) {
    if ((name === 'href' || name === 'xlink:href') && !/^#[\w.:-]+$/.test(value.trim())) continue;
    // A presentation attribute is read as CSS, where an escape (u\72l) can spell url(: none is kept.
    if (name !== 'style' && (value.includes('\\') || (/url\s*\(/i.test(value) && !LOCAL_URL.test(value)))) continue;
    kept[name] = value;
  }
  return kept;
}

const options: sanitizeHtml.IOptions = {
  allowedTags: svgTags,
  allowedAttributes: { '*': svgAttributes },
  // Their content is dropped with them, not kept as text.
  nonTextTags: ['script', 'style', 'foreignObject', 'textarea', 'option', 'noscript', 'iframe'],
  allowedSchemes: [],
  allowedSchemesAppliedToAttributes: [],
  allowProtocolRelative: false,
  allowedStyles: { '*': Object.fromEntries(presentationProperties().map((property) => [property, styleValues])) },
  parser: { xmlMode: true, decodeEntities: true },
  selfClosing: [],
  transformTags: {
    '*': (tagName, attribs) => ({ tagName, attribs: localReferencesOnly(attribs) }),
    svg: (tagName, attribs) => ({
      tagName,
      attribs: { ...localReferencesOnly(attribs), xmlns: 'http://www.w3.org/2000/svg', 'xmlns:xlink': 'http://www.w3.org/1999/xlink' },
    }),
  },
};

/** The SVG rebuilt from the allowlist; undefined when the bytes are not an SVG document's text. */
export function sanitizeSvg(bytes: Buffer): string | undefined {
  let source: string;
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(source) || !/<svg[\s>]/.test(source)) return undefined;
  // Whatever lay outside the root element (a DOCTYPE's internal subset, stray text) is left out.
  const clean = sanitizeHtml(source, options);
  const start = clean.indexOf('<svg');
  const end = clean.lastIndexOf('</svg>');
  if (start < 0 || end < start) return undefined;
  return clean.slice(start, end + '</svg>'.length);
}
