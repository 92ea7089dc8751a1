import { describe, expect, it } from 'vitest';
import { MAX_TIME_SECONDS, parseTimeSpec, resolveTime, rfc3339 } from './time.js';

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

describe('rfc3339', () => {
  it('agrees with Date over leap years, month ends and the range limits', () => {
    const samples = [0, 59, 86_399, 951_782_400, 951_868_799, 1_709_164_800, 1_700_006_400, 4_102_444_800, MAX_TIME_SECONDS];
    for (let t = 0; t < MAX_TIME_SECONDS; t += 7_777_777 + (t % 86_400)) samples.push(t);
    for (const t of samples) expect(rfc3339(t), String(t)).toBe(iso(t));
  });
});

describe('parseTimeSpec', () => {
  it('reads the four accepted forms', () => {
    expect(parseTimeSpec('-90s')).toEqual({ relative: true, offsetSeconds: -90 });
    expect(parseTimeSpec('-30m')).toEqual({ relative: true, offsetSeconds: -1800 });
    expect(parseTimeSpec('-1h')).toEqual({ relative: true, offsetSeconds: -3600 });
    expect(parseTimeSpec('-7d')).toEqual({ relative: true, offsetSeconds: -604_800 });
    expect(parseTimeSpec('0')).toEqual({ relative: false, seconds: 0 });
    expect(parseTimeSpec('1700006400')).toEqual({ relative: false, seconds: 1_700_006_400 });
    expect(parseTimeSpec('2023-11-15')).toEqual({ relative: false, seconds: 1_700_006_400 });
    expect(parseTimeSpec('2023-11-15T00:00:00Z')).toEqual({ relative: false, seconds: 1_700_006_400 });
    expect(parseTimeSpec('2023-11-15T01:30:00.250+01:30')).toEqual({ relative: false, seconds: 1_700_006_400 });
    expect(parseTimeSpec('2023-11-14T22:00:00-02:00')).toEqual({ relative: false, seconds: 1_700_006_400 });
    expect(parseTimeSpec('2024-02-29')).toEqual({ relative: false, seconds: 1_709_164_800 });
  });

  it('rejects everything else', () => {
    for (const bad of ['', 'now', '-1', '-1y', '1h', '+1h', '-1.5h', '1.5', '1e9', '0x10', ' 1', '2023-02-29', '2023-13-01', '2023-11-15T24:00:00Z', '2023-11-15T00:00:00', '2023-11-15T00:00:00+25:00', '١٢٣'])
      expect(parseTimeSpec(bad), bad).toBeNull();
  });

  it('resolves relative offsets against now and refuses out-of-range results', () => {
    expect(resolveTime({ relative: true, offsetSeconds: -3600 }, 1_700_006_400.9)).toBe(1_700_002_800);
    expect(resolveTime({ relative: true, offsetSeconds: -3600 }, 100)).toBeNaN();
    expect(resolveTime({ relative: false, seconds: MAX_TIME_SECONDS + 1 }, 0)).toBeNaN();
  });
});
