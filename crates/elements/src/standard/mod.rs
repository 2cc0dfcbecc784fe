//! Standard elements: sources, sinks, queues, counters, schedulers,
//! classifiers, scripting.

pub mod classifier;
pub mod classifier_program;
pub mod counter;
pub mod discard;
pub mod drivermanager;
pub mod errorelement;
pub mod infinitesource;
pub mod message;
pub mod notifierqueue;
pub mod null;
pub mod print;
pub mod queue;
pub mod script;
pub mod scriptlang;
pub mod simplequeue;
pub mod tee;
pub mod unqueue;

mod reg_a;
mod reg_b;
mod reg_c;

use rclick_core::Registry;

use queue::{Queue, QueueKind};

/// Adds the standard element classes to `reg`.
pub fn register(reg: &mut Registry) {
    reg.add("Counter", || Box::<counter::Counter>::default());
    reg.add("Discard", || Box::<discard::Discard>::default());
    reg.add("InfiniteSource", || Box::<infinitesource::InfiniteSource>::default());
    reg.add("Null", || Box::<null::Null>::default());
    reg.add("Queue", || Box::new(Queue::new(QueueKind::Notifier)));
    reg.add("NotifierQueue", || Box::new(notifierqueue::new()));
    reg.add("SimpleQueue", || Box::new(simplequeue::new()));
    reg.add("Tee", || Box::<tee::Tee>::default());
    reg.add("Unqueue", || Box::<unqueue::Unqueue>::default());
    reg_a::register(reg);
    reg_b::register(reg);
    reg_c::register(reg);
}
