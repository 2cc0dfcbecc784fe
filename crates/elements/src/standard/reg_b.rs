//! Registration of one group of standard elements: scripting and
//! debugging output.

use rclick_core::Registry;

use super::{drivermanager, errorelement, message, print, script};

pub(crate) fn register(reg: &mut Registry) {
    reg.add("DriverManager", || Box::new(drivermanager::new()));
    reg.add("Error", || Box::<errorelement::ErrorElement>::default());
    reg.add("Message", || Box::<message::Message>::default());
    reg.add("Print", || Box::<print::Print>::default());
    reg.add("Script", || Box::<script::Script>::default());
}
