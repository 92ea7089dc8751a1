import { notFound, type NotFoundKind } from '../errors.js';

/** A percent-decoded path segment; a malformed escape names no record of its kind (404). */
export function segment(raw: string, kind: NotFoundKind): string {
  if (raw.indexOf('%') < 0) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw notFound(kind, raw);
  }
}
