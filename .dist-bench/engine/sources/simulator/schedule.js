/**
 * Binary min-heap of (time, id) pairs in typed arrays: the next event time of every active pool.
 * Ordered by time, then id, so simultaneous events have one fixed order.
 */
export class Schedule {
    times;
    ids;
    count = 0;
    constructor(initialCapacity = 1024) {
        const cap = Math.max(16, initialCapacity);
        this.times = new Float64Array(cap);
        this.ids = new Int32Array(cap);
    }
    get size() {
        return this.count;
    }
    /** Earliest time, or +Infinity when empty. */
    peekTime() {
        return this.count > 0 ? this.times[0] : Infinity;
    }
    /** Id of the earliest entry; only valid when size > 0. */
    peekId() {
        return this.ids[0];
    }
    push(time, id) {
        if (this.count === this.times.length)
            this.grow();
        this.siftUp(this.count++, time, id);
    }
    /** Replaces the earliest entry (pop + push in one sift). */
    replaceTop(time, id) {
        this.siftDown(0, time, id);
    }
    pop() {
        const last = --this.count;
        if (last > 0)
            this.siftDown(0, this.times[last], this.ids[last]);
    }
    grow() {
        const times = new Float64Array(this.times.length * 2);
        times.set(this.times);
        const ids = new Int32Array(this.ids.length * 2);
        ids.set(this.ids);
        this.times = times;
        this.ids = ids;
    }
    siftUp(i, time, id) {
        const times = this.times;
        const ids = this.ids;
        while (i > 0) {
            const parent = (i - 1) >> 1;
            const pt = times[parent];
            if (pt < time || (pt === time && ids[parent] < id))
                break;
            times[i] = pt;
            ids[i] = ids[parent];
            i = parent;
        }
        times[i] = time;
        ids[i] = id;
    }
    siftDown(i, time, id) {
        const times = this.times;
        const ids = this.ids;
        const n = this.count;
        for (;;) {
            let child = 2 * i + 1;
            if (child >= n)
                break;
            let ct = times[child];
            let cid = ids[child];
            const right = child + 1;
            if (right < n) {
                const rt = times[right];
                const rid = ids[right];
                if (rt < ct || (rt === ct && rid < cid)) {
                    child = right;
                    ct = rt;
                    cid = rid;
                }
            }
            if (time < ct || (time === ct && id < cid))
                break;
            times[i] = ct;
            ids[i] = cid;
            i = child;
        }
        times[i] = time;
        ids[i] = id;
    }
}
//# sourceMappingURL=schedule.js.map