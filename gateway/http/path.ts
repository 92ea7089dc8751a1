import { NOT_FOUND } from '../errors.js';

/** A percent-decoded path segment; a malformed escape is not a path served (404). */
export function segment(raw: string): string {
  if (raw.indexOf('%') < 0) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw NOT_FOUND;
  }
}
