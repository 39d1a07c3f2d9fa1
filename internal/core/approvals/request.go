package approvals

// Request names the decided request x carries out and who decided it, for
// what an approved call leaves behind (a schedule records the approval it
// came from, once).
func (x *Exchange) Request() (id, decidedBy string) { return x.a.ID, x.a.DecidedBy }
