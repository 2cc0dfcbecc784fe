//! Registration of one group of standard elements: sources, switches,
//! schedulers, paint and header-trimming elements.

use rclick_core::Registry;

use super::*;

pub(crate) fn register(reg: &mut Registry) {
    reg.add("CheckPaint", || Box::<checkpaint::CheckPaint>::default());
    reg.add("HashSwitch", || Box::<hashswitch::HashSwitch>::default());
    reg.add("Idle", || Box::<idle::Idle>::default());
    reg.add("Paint", || Box::<paint::Paint>::default());
    reg.add("PaintSwitch", || Box::<paintswitch::PaintSwitch>::default());
    reg.add("PaintTee", || Box::<painttee::PaintTee>::default());
    reg.add("PrioSched", || Box::<priosched::PrioSched>::default());
    reg.add("PullTee", || Box::<pulltee::PullTee>::default());
    reg.add("RatedSource", || Box::<ratedsource::RatedSource>::default());
    reg.add("RatedUnqueue", || {
        Box::<ratedunqueue::RatedUnqueue>::default()
    });
    reg.add("RoundRobinSched", || {
        Box::<roundrobinsched::RoundRobinSched>::default()
    });
    reg.add("RoundRobinSwitch", || {
        Box::<roundrobinswitch::RoundRobinSwitch>::default()
    });
    reg.add("ScheduleInfo", || {
        Box::<scheduleinfo::ScheduleInfo>::default()
    });
    reg.add("SetTimestamp", || {
        Box::<settimestamp::SetTimestamp>::default()
    });
    reg.add("StaticSwitch", || {
        Box::<staticswitch::StaticSwitch>::default()
    });
    reg.add("StrideSched", || Box::<stridesched::StrideSched>::default());
    reg.add("Strip", || Box::<strip::Strip>::default());
    reg.add("StripToNetworkHeader", || {
        Box::<striptonetheader::StripToNetworkHeader>::default()
    });
    reg.add("Switch", || Box::<switch::Switch>::default());
    reg.add("TimedSource", || Box::<timedsource::TimedSource>::default());
    reg.add("Truncate", || Box::<truncate::Truncate>::default());
    reg.add("Unstrip", || Box::<unstrip::Unstrip>::default());
}
