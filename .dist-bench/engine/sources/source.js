export {};
//# sourceMappingURL=source.js.map