// Names the functions of one object's string-keyed properties, its
// accessors' getters and setters included, after the properties: for the
// objects whose accessors rename (node.go) cannot reach from Go. Compiled
// once. It uses the built-ins as it finds them (and as few as it can:
// goja creates each on first use): code that replaced them first only
// spoils its own view of the names.
(function (o) {
	'use strict';
	const fix = (f, name) => {
		if (typeof f === 'function' && f.name.indexOf('/') >= 0) {
			Object.defineProperty(f, 'name', { value: name, configurable: true });
		}
	};
	const keys = Object.getOwnPropertyNames(o);
	for (let i = 0; i < keys.length; i++) {
		const d = Object.getOwnPropertyDescriptor(o, keys[i]);
		fix(d.value, keys[i]);
		fix(d.get, 'get ' + keys[i]);
		fix(d.set, 'set ' + keys[i]);
	}
})
