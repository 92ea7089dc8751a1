export {};
//# sourceMappingURL=pipeline.js.map