package tokenvault

// InstanceForTest is v's instance id (vault_instance.go): the write path
// tests tell the rows only this Vault writes by it.
func (v *Vault) InstanceForTest() string { return v.instance }
