/**
 * Bounded top-k selection over (value, id) pairs: O(n log k) time, O(k) memory, no allocation per
 * offer. Rank: value descending (or ascending), then id ascending, so the order is total and a
 * keyset cursor (value, id) resumes exactly after the last row served.
 */
export class TopK {
    values;
    ids;
    k = 0;
    size = 0;
    desc = true;
    constructor(capacity) {
        this.values = new Float64Array(capacity);
        this.ids = new Int32Array(capacity);
    }
    reset(k, descending) {
        if (k > this.values.length)
            throw new RangeError(`k ${k} exceeds capacity ${this.values.length}`);
        this.k = k;
        this.size = 0;
        this.desc = descending;
    }
    /** True when (va, ia) ranks before (vb, ib). */
    ahead(va, ia, vb, ib) {
        if (va !== vb)
            return this.desc ? va > vb : va < vb;
        return ia < ib;
    }
    offer(value, id) {
        const { values, ids } = this;
        if (this.size < this.k) {
            // Sift up: the root holds the entry ranked last among those kept.
            let i = this.size++;
            while (i > 0) {
                const parent = (i - 1) >> 1;
                if (!this.ahead(values[parent], ids[parent], value, id))
                    break;
                values[i] = values[parent];
                ids[i] = ids[parent];
                i = parent;
            }
            values[i] = value;
            ids[i] = id;
            return;
        }
        if (this.k === 0 || !this.ahead(value, id, values[0], ids[0]))
            return;
        let i = 0;
        const n = this.size;
        for (;;) {
            const l = 2 * i + 1;
            if (l >= n)
                break;
            const r = l + 1;
            // The child ranked later goes up.
            const c = r < n && this.ahead(values[l], ids[l], values[r], ids[r]) ? r : l;
            if (!this.ahead(value, id, values[c], ids[c]))
                break;
            values[i] = values[c];
            ids[i] = ids[c];
            i = c;
        }
        values[i] = value;
        ids[i] = id;
    }
    /** Moves the kept entries into `outValues`/`outIds` best first; returns how many. */
    drain(outValues, outIds) {
        const n = this.size;
        const order = Array.from({ length: n }, (_, i) => i);
        order.sort((a, b) => (this.ahead(this.values[a], this.ids[a], this.values[b], this.ids[b]) ? -1 : 1));
        for (let i = 0; i < n; i++) {
            outValues[i] = this.values[order[i]];
            outIds[i] = this.ids[order[i]];
        }
        this.size = 0;
        return n;
    }
}
//# sourceMappingURL=top-k.js.map